/**
 * The real OpenCode (npm `opencode-ai@1.18.33`, offline) run headless in a
 * project set up by `install opencode --gateway`, against the scripted
 * Responses model behind the real server: one episode per session, nothing
 * twice, failures as failures, the title call a side call inside it, and
 * the host's own tokens. Skipped (saying why) where no OpenCode binary can
 * be had (`_opencode.ts`: `HARNESS_OPENCODE_BIN`, a copy npm put in the
 * temp folder, else npm installs one).
 */
import { assertEquals } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { runMain } from "../_cli.ts";
import {
  findOpencode,
  runOpencode,
  writeOpencodeProject,
} from "./_opencode.ts";
import { startOpencodeModel } from "./_opencode_model.ts";
import { assertOneEpisode } from "./_opencode_gateway.ts";

const found = await findOpencode();
if (found.bin === null) {
  console.error(`opencode live test skipped: ${found.why}`);
}

Deno.test({
  name:
    "a real OpenCode session through install opencode --gateway: one episode, nothing twice, failures as failures, the title a side call, the host's tokens",
  ignore: !found.bin,
  async fn() {
    await using dir = await tempDir();
    const project = join(dir.path, "work");
    const home = join(dir.path, "home");
    await Deno.mkdir(home);
    await writeOpencodeProject(project);
    await using model = startOpencodeModel(project);
    await using srv = await startServer({
      modelGateway: { upstreamOpenai: model.url },
    });
    const install = await runMain([
      "install",
      "opencode",
      "--project",
      project,
      "--url",
      srv.url,
      "--gateway",
      "--capture",
      "live",
    ]);
    assertEquals(install.code, 0, install.err);
    const run = await runOpencode({ bin: found.bin!, project, home });
    assertEquals(run.code, 0, run.stderr.slice(-2000));
    await srv.server.modelGateway!.settled();
    await assertOneEpisode(srv.store, "live", {
      session: run.session!,
      tokens: run.tokens,
      requests: model.requests.length,
    });
    assertEquals(run.tokens.steps, 5);
    assertEquals(model.requests.length, 6);
  },
});
