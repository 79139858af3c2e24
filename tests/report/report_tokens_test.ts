/**
 * The HTML report's token counts agree with `capture inspect`: where the
 * model gateway recorded an episode only its turns count (the hooks' would
 * count the same calls twice), and a count the hooks know to be partial is
 * shown as such.
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation, episodeStarted } from "../../lib/trace/mod.ts";
import { modelResponded } from "../../lib/trace/model_events.ts";
import { captureReportData } from "../../lib/report/capture_data.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";

const usage = (input_tokens: number, output_tokens: number) => ({
  usage: { input_tokens, output_tokens },
});

Deno.test("captureReportData(): the gateway's turns alone where it recorded, and a partial count marked", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const both = fixedContext("c", "ep_both");
  const hooksOnly = fixedContext("c", "ep_hooks");
  store.sink("c").emitMany([
    episodeStarted(both),
    // The hooks read the turn from the transcript; the gateway saw it too.
    modelResponded(both, { response: usage(100, 20) }),
    modelResponded(both, { response: usage(100, 20), source: "model_gateway" }),
    modelResponded(both, { response: usage(50, 5), source: "model_gateway" }),
    episodeStarted(hooksOnly),
    modelResponded(hooksOnly, { response: usage(200, 40) }),
    annotation(hooksOnly, {
      type: "usage.partial",
      reason: "transcript_missing",
    }),
  ]);
  const report = await captureReportData(store, "c");
  const byId = new Map(report.episodes.map((e) => [e.episode_id, e]));
  assertEquals(byId.get("ep_both")!.tokens, { input: 150, output: 25 });
  assertEquals(byId.get("ep_both")!.turns.length, 2);
  assertEquals(byId.get("ep_hooks")!.tokens, {
    input: 200,
    output: 40,
    partial: true,
  });
  assertEquals(report.figures.tokens, {
    input: 350,
    output: 65,
    partial: true,
  });
  // The same figures as capture inspect.
  const inspection = await inspectCapture(store, "c");
  const inspected = new Map(inspection.episodes.map((e) => [e.episode_id, e]));
  assertEquals(inspected.get("ep_both")!.tokens?.input, 150);
  assertEquals(inspected.get("ep_hooks")!.tokens?.partial, true);
});
