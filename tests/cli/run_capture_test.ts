/**
 * `compile.ts run --trace` (issue #37 items 9 and 10): the run's capture
 * is its own and finished when the run ends, even when the run failed; a
 * capture the user named is left open. The real entry with the `run`
 * task's permissions, write access to the temporary store only.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { tempDir } from "../_helpers.ts";
import { startScriptedServer } from "../models/_scripted_server.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function runEntry(
  root: string,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      `--allow-write=${root}`,
      "--allow-env",
      "--allow-net=127.0.0.1",
      "compile.ts",
      "run",
      ...args,
      "--root",
      root,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: r.code,
    out: dec.decode(r.stdout),
    err: dec.decode(r.stderr),
  };
}

async function deskTreePackage(dir: string): Promise<string> {
  using store = new HarnessStore(`${dir}/train`);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  const pkg = compileBehavior(await loadEpisodes(store, "desk"), {
    name: "desk",
    effects: DESK_EFFECTS,
  }).package;
  const file = `${dir}/desk.package.json`;
  Deno.writeTextFileSync(file, JSON.stringify(pkg));
  return file;
}

Deno.test("compile.ts run --trace: the run gets a capture of its own, finished when the run ends (completed or failed); a named capture stays open", async () => {
  await using dir = await tempDir();
  const pkgFile = await deskTreePackage(dir.path);
  const root = `${dir.path}/store`;
  const ok = await runEntry(root, [
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--episode",
    "700001",
    "--trace",
  ]);
  assertEquals(ok.code, 0, ok.err + ok.out);
  const id = ok.out.match(/trace: capture (\S+)/)?.[1];
  assertOk(id?.startsWith("run_desk_"), ok.out);

  await using server = startScriptedServer([{
    status: 500,
    json: { error: { message: "context length exceeded" } },
  }]);
  const failed = await runEntry(root, [
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--episode",
    "700002",
    "--model",
    "openai/capped",
    "--model-url",
    `${server.origin}/v1`,
    "--trace",
    "--json",
  ]);
  assertEquals(failed.code, 1, failed.err + failed.out);
  assertEquals(JSON.parse(failed.out).status, "failed");

  const named = await runEntry(root, [
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--episode",
    "700003",
    "--trace",
    "--capture",
    "mine",
  ]);
  assertEquals(named.code, 0, named.err + named.out);

  using store = new HarnessStore(root, { readOnly: true });
  const captures = store.listCaptures();
  const runs = captures.filter((c) => c.capture_id.startsWith("run_desk_"));
  assertEquals(runs.length, 2, "one capture per run");
  for (const c of runs) assertEquals(c.status, "finished", c.capture_id);
  assertEquals(store.getCapture("mine")?.status, "open");
  for (const c of [...runs, store.getCapture("mine")!]) {
    const events = await Array.fromAsync(store.readEvents(c.capture_id));
    const finished = events.filter((e) => e.kind === "episode.finished");
    assertEquals(finished.length, 1, c.capture_id);
  }
});
