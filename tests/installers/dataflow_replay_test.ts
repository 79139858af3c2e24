/**
 * A recorded Claude Code `dataflow` session (`fixtures/hosts/host_a/
 * dataflow/v1`, with its transcript) played through the command hooks
 * `ingest.ts install claude-code --command` writes, as the host runs them:
 * the tokens captured are the host's own (issue #36's Stop race: 500/100
 * over 5 calls, once counted 700/140 from the transcript's 7 assistant
 * records, or cut short at Stop).
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { isHarnessEntry } from "../../lib/installers/hook_settings.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import {
  assistantTexts,
  captureEvents,
  copyTranscripts,
  HOST_A,
  payloads,
  tokenSums,
} from "../adapters/_host_a_replay.ts";
import { quiet } from "./_quiet.ts";

const SCENARIO = "dataflow/v1";

/** The host's own totals: the last `cost-state` of the transcript. */
function hostTotals(): [number, number] {
  const dir = `${HOST_A}/${SCENARIO}/_transcripts`;
  const [name] = [...Deno.readDirSync(dir)].map((e) => e.name);
  const line = Deno.readTextFileSync(`${dir}/${name}`).split("\n")
    .filter((l) => l.includes('"type":"cost-state"')).at(-1)!;
  const usage = Object.values(
    JSON.parse(line).modelUsage as Record<
      string,
      { inputTokens: number; outputTokens: number }
    >,
  );
  return [
    usage.reduce((s, u) => s + u.inputTokens, 0),
    usage.reduce((s, u) => s + u.outputTokens, 0),
  ];
}

/** Run one command hook as Claude Code does: a shell, the payload on stdin. */
async function runHook(
  command: string,
  o: { body: string; cwd: string },
): Promise<{ code: number; stdout: string }> {
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", command],
    cwd: o.cwd,
    env: { CLAUDE_PROJECT_DIR: o.cwd },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(o.body)).catch(() => {});
  await w.close().catch(() => {});
  const out = await child.output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("a recorded Claude Code dataflow session played through the installed command hooks captures the host's own tokens (500/100 over 5 calls) and each text once", async () => {
  const { main } = await import("../../ingest.ts");
  await using srv = await startServer();
  await using dir = await tempDir();
  const project = join(dir.path, "project");
  const transcripts = join(dir.path, "transcripts");
  await Deno.mkdir(project);
  await Deno.mkdir(transcripts);
  assertEquals(
    await main([
      "install",
      "claude-code",
      "--project",
      project,
      "--url",
      srv.url,
      "--capture",
      "df",
      "--command",
    ], quiet),
    0,
  );
  const settings = JSON.parse(
    Deno.readTextFileSync(join(project, ".claude/settings.json")),
  ) as { hooks: Record<string, { hooks: { command?: string }[] }[]> };
  await copyTranscripts(SCENARIO, transcripts);
  let hooks = 0;
  for (const { name, body } of payloads(SCENARIO, transcripts)) {
    const event = JSON.parse(body).hook_event_name as string;
    const entries = (settings.hooks[event] ?? []).flatMap((g) => g.hooks)
      .filter((e) => isHarnessEntry(e, "host_a"));
    assertEquals(entries.length, 1, `${name}: one harness hook`);
    const r = await runHook(entries[0].command!, { body, cwd: project });
    assertEquals([r.code, r.stdout], [0, ""], name);
    hooks++;
  }
  assertEquals(hooks, 16);
  assertEquals((await srv.store.verifyCapture("df")).ok, true);
  const evs = await captureEvents(srv.store, "df");
  const [input, output] = hostTotals();
  assertEquals([input, output], [500, 100]);
  assertEquals(tokenSums(evs), [input, output, 5]);
  const inspection = await inspectCapture(srv.store, "df");
  assertEquals(inspection.episodes[0].tokens, {
    input,
    output,
    responses: 5,
  });
  // The texts the model wrote, each once; the last is the Stop's.
  const said = assistantTexts(evs);
  assertEquals(said.slice(0, 2), [
    "Let me see which order is next.",
    "The next order is ORD-7731; reading it.",
  ]);
  assertEquals(said.length, 3, JSON.stringify(said));
  assertOk(said[2].startsWith("Wrote reports/ORD-7731.txt"), said[2]);
});
