/**
 * `capture outcome` records an outcome only for an episode the capture
 * holds (issue 42, item 3). Before, `capture outcome CAP gw_nonexistent
 * --success` said "Recorded success" and added a permanent F0 episode to
 * the spool (compile then counted 31 of 30). Now it is refused, naming the
 * closest ids, and nothing is written; an episode the model gateway has
 * just answered is waited for, not refused.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { episodeStarted, message } from "../../lib/trace/mod.ts";
import {
  CaptureCoordinator,
  EpisodeNotFoundError,
} from "../../lib/control/mod.ts";
import { startGateway } from "../model_gateway/_gateway.ts";

const EPISODES = [
  "gw_3f9a2c71-5d0e-4b7a-9c1e-2a8b6d4f0e13",
  "gw_7b1e0d44-a2c9-4f6b-8e3d-5c9a1b7e2f60",
  "gw_c05d9e8a-6b3f-4a21-b7d4-9e0f1c2a3b84",
];

function fill(store: HarnessStore, capture: string): void {
  for (const ep of EPISODES) {
    const ctx = fixedContext(capture, ep);
    store.sink(capture).emitMany([
      episodeStarted(ctx),
      message(ctx, { role: "user", text: "refund my order" }),
    ]);
  }
}

function spoolBytes(root: string, capture: string): number {
  return Deno.statSync(`${root}/captures/${capture}.jsonl`).size;
}

Deno.test("capture outcome refuses an episode the capture does not hold, names the closest ids, and writes nothing", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/store`;
  {
    using store = new HarnessStore(root);
    fill(store, "cap");
  }
  const before = spoolBytes(root, "cap");
  const bogus = await runMain(
    [
      "capture",
      "outcome",
      "cap",
      "gw_nonexistent",
      "--success",
      "--root",
      root,
    ],
  );
  assertEquals(bogus.code, 1, bogus.out);
  assertOk(!bogus.out.includes("Recorded"), bogus.out);
  assertOk(
    /Episode "gw_nonexistent" is not in capture "cap"/.test(bogus.err),
    bogus.err,
  );
  assertOk(/nothing was recorded/.test(bogus.err), bogus.err);
  // No id is close to it: the message still shows what the ids look like.
  assertOk(bogus.err.includes(EPISODES[0]), bogus.err);

  // A truncated id (as a table column shows it) and a typo: the ids meant.
  const truncated = await runMain(
    ["capture", "outcome", "cap", "gw_7b1e0d44", "--failure", "--root", root],
  );
  assertEquals(truncated.code, 1);
  assertOk(
    new RegExp(`closest: ${EPISODES[1]}`).test(truncated.err),
    truncated.err,
  );
  const typo = EPISODES[2].replace("9e8a", "9e8b");
  const typed = await runMain(
    ["capture", "outcome", "cap", typo, "--success", "--root", root, "--json"],
  );
  assertEquals(typed.code, 1);
  assertOk(JSON.parse(typed.err).error.includes(EPISODES[2]), typed.err);
  // The capture's own record is not an episode.
  const own = await runMain(
    ["capture", "outcome", "cap", "_capture", "--success", "--root", root],
  );
  assertEquals(own.code, 1);
  assertOk(/not an episode/.test(own.err), own.err);

  // Nothing was written: the spool, the episodes and their count.
  assertEquals(spoolBytes(root, "cap"), before);
  const inspected = await runMain(
    ["capture", "inspect", "cap", "--json", "--root", root],
  );
  const inspection = JSON.parse(inspected.out);
  assertEquals(
    inspection.episodes.map((e: { episode_id: string }) => e.episode_id),
    EPISODES,
  );

  // An episode it holds is recorded as before.
  const ok = await runMain(
    ["capture", "outcome", "cap", EPISODES[1], "--success", "--root", root],
  );
  assertEquals(ok.code, 0, ok.err);
  assertOk(ok.out.includes(`Recorded success for episode ${EPISODES[1]}`));
  assertOk(spoolBytes(root, "cap") > before);
});

Deno.test("CaptureCoordinator.markOutcome and the MCP tool's path refuse the same way (EpisodeNotFoundError with the closest ids)", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  fill(store, "cap");
  const coord = new CaptureCoordinator(store);
  const count = store.getCapture("cap")!.event_count;
  let err: unknown = null;
  try {
    coord.markOutcome("cap", "gw_3f9a2c71", { success: true });
  } catch (e) {
    err = e;
  }
  assertOk(err instanceof EpisodeNotFoundError, String(err));
  assertEquals((err as EpisodeNotFoundError).closest, [EPISODES[0]]);
  assertEquals(store.getCapture("cap")!.event_count, count);
  coord.markOutcome("cap", EPISODES[0], { success: true });
  assertEquals(store.getCapture("cap")!.event_count, count + 1);
});

Deno.test("capture outcome beside a running server: an episode the gateway has just answered is recorded, one it never saw is refused", async () => {
  await using rig = await startGateway({ capture: "cap_live" });
  const root = rig.server.root;
  rig.up.push({ text: "Your order is refunded." });
  const client = rig.openai();
  await client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "refund order 1234" }],
  }, { headers: { "x-harness-episode": "ep_just_answered" } });
  // At once, as a script marks outcomes after its run: the gateway may not
  // have recorded the exchange yet; the command waits for it.
  const ok = await runMain(
    ["capture", "outcome", "cap_live", "ep_just_answered", "--success"]
      .concat(["--root", root]),
  );
  assertEquals(ok.code, 0, ok.err);
  const bogus = await runMain(
    ["capture", "outcome", "cap_live", "ep_just_answerd", "--success"]
      .concat(["--root", root]),
  );
  assertEquals(bogus.code, 1);
  assertOk(/closest: ep_just_answered/.test(bogus.err), bogus.err);
  const events = await rig.events();
  const outcomes = events.filter((e) =>
    e.kind === "annotation" && e.payload.type === "episode.outcome"
  ).map((e) => e.episode_id);
  assertEquals(outcomes, ["ep_just_answered"]);
  assertEquals(
    [...new Set(events.map((e) => e.episode_id))],
    ["ep_just_answered"],
  );
});
