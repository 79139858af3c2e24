/**
 * Counts that agree (issue 48, item 6): the capture's own record (`_capture`:
 * its start and finish) is not an episode, so `capture inspect` of a
 * one-episode capture shows one episode (it showed two, as the demo's
 * `_run` capture did), and says which events are the capture's own.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { episodeStarted, message } from "../../lib/trace/mod.ts";

Deno.test("capture inspect: a started and finished capture with one episode shows one episode, and the capture's own events apart", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/store`;
  const started = await runMain(
    ["capture", "start", "--id", "c", "--root", root],
  );
  assertEquals(started.code, 0, started.err);
  {
    using store = new HarnessStore(root);
    const ctx = fixedContext("c", "run_1");
    store.sink("c").emitMany([
      episodeStarted(ctx),
      message(ctx, { role: "user", text: "refund order 1234" }),
    ]);
  }
  assertEquals(
    (await runMain(["capture", "finish", "c", "--root", root])).code,
    0,
  );
  const json = await runMain(
    ["capture", "inspect", "c", "--json", "--root", root],
  );
  assertEquals(json.code, 0, json.err);
  const i = JSON.parse(json.out);
  assertEquals(
    i.episodes.map((e: { episode_id: string }) => e.episode_id),
    ["run_1"],
  );
  assertEquals(i.capture_events, 2);
  assertEquals(i.chain.events, 4);
  const text = await runMain(["capture", "inspect", "c", "--root", root]);
  assertOk(text.out.includes("\n  episodes   1\n"), text.out);
  assertOk(
    text.out.includes(
      "events     4, ",
    ) && text.out.includes("(2 of them the capture's own record"),
    text.out,
  );
  assertOk(!/\n_capture /.test(text.out), text.out);
});
