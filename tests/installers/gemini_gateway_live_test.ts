/**
 * The real Gemini CLI (npm `@google/gemini-cli@0.61.0`, offline) run
 * headless in a project set up by `install gemini-cli --gateway`, against
 * the scripted Gemini-API model behind the real server: every model request
 * the model received is in the capture once, in the hooks' episode (the
 * router's classifier call too), the episode's tokens the gateway's (the
 * answers' `usageMetadata`). Skipped (saying why) where Gemini CLI cannot
 * be had (`_gemini_cli.ts`: `HARNESS_GEMINI_CLI`, a copy npm put in the
 * temp folder, else npm installs one).
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { runMain } from "../_cli.ts";
import { recordedEvents } from "../model_gateway/_gateway.ts";
import {
  findGeminiCli,
  runGeminiCli,
  writeGeminiProject,
} from "./_gemini_cli.ts";
import { startGatewaySessionModel } from "./_gemini_cli_model.ts";

const found = await findGeminiCli();
if (found.js === null) {
  console.error(`gemini-cli live test skipped: ${found.why}`);
}

Deno.test({
  name:
    "a real Gemini CLI session through install gemini-cli --gateway: every model request once, in the hooks' episode, tokens = usageMetadata",
  ignore: !found.js,
  async fn() {
    await using dir = await tempDir();
    const project = join(dir.path, "work");
    const home = join(dir.path, "home");
    await writeGeminiProject({ project, home });
    await using model = startGatewaySessionModel();
    await using srv = await startServer({
      modelGateway: { upstreams: { gemini: model.url } },
    });
    const install = await runMain([
      "install",
      "gemini-cli",
      "--project",
      project,
      "--url",
      srv.url,
      "--gateway",
      "--capture",
      "live",
    ]);
    equal(install.code, 0, install.err);
    const run = await runGeminiCli({
      js: found.js!,
      project,
      home,
      prompt: "Read notes.txt, then say hi from the shell.",
    });
    equal(run.code, 0, run.stderr.slice(-2000));
    ok(run.stdout.includes("Done:"), run.stdout);
    const evs = await recordedEvents(srv, "live");
    const episodes = [...new Set(evs.map((e) => e.episode_id))];
    equal(episodes.length, 1, "one episode");
    ok(
      evs.some((e) =>
        e.kind === "episode.started" && e.source.host === "host_b"
      ),
      "the hooks' episode",
    );
    const requested = evs.filter((e) => e.kind === "model.requested");
    const responded = evs.filter((e) => e.kind === "model.responded");
    equal(requested.length, model.requests.length, "each model request once");
    equal(responded.length, model.requests.length);
    ok(
      model.requests.some((r) => r.api === "generateContent"),
      "the classifier call",
    );
    const sum = (f: (u: Record<string, number>) => number) =>
      model.answers.reduce((n, bytes) => {
        const text = new TextDecoder().decode(bytes).trim();
        const last = text.split(/\r?\n\r?\n/).pop()!.replace(/^data: /, "");
        return n + f(JSON.parse(last).usageMetadata);
      }, 0);
    const usage = responded.map((e) =>
      (e.payload as { response: { usage: Record<string, number> } }).response
        .usage
    );
    deepEqual(
      [
        usage.reduce((n, u) => n + u.input_tokens, 0),
        usage.reduce((n, u) => n + u.output_tokens, 0),
      ],
      [
        sum((u) => u.promptTokenCount),
        sum((u) => (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0)),
      ],
      "tokens = usageMetadata",
    );
  },
});
