/**
 * `store prune --older-than`: `6m` typed for six months must not delete
 * everything older than six minutes. A bare `m` is refused with both
 * readings; `min` and `mo` are exact; the help says so.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { tempDir } from "../_helpers.ts";
import { task } from "./_tasks.ts";

Deno.test("store prune --older-than 6m is refused with 'write 6min (minutes) or 6mo (months…)' and deletes nothing; 0min and 6mo are read exactly", async () => {
  await using dir = await tempDir();
  // The tasks' store is the checkout's .harness unless HARNESS_ROOT names one.
  const env = { HARNESS_ROOT: join(dir.path, ".harness") };
  {
    using store = new HarnessStore(join(dir.path, ".harness"));
    store.sink("old_one").emit(annotation({
      captureId: "old_one",
      episodeId: "ep_1",
      source: { host: "harness", adapter: "test", model: null },
    }, { type: "note" }));
  }
  const m = await task(dir.path, [
    "ingest",
    "store",
    "prune",
    "--older-than",
    "6m",
  ], env);
  assertEquals(m.code, 2, m.err);
  assertOk(
    m.err.startsWith(
      "harness: --older-than 6m could be minutes or months: write 6min (minutes) or 6mo (months of 30 days)",
    ),
    m.err,
  );
  assertOk(/s, min, h, d, w, mo = 30 days; a bare m is refused/.test(m.err));
  const months = await task(dir.path, [
    "ingest",
    "store",
    "prune",
    "--older-than",
    "6mo",
    "--json",
  ], env);
  assertEquals(months.code, 0, months.err);
  const said = JSON.parse(months.out);
  assertEquals(said.expired, []);
  const cutoff = Date.parse(said.written_before);
  const sixMonths = 6 * 30 * 86_400_000;
  assertOk(Math.abs(Date.now() - sixMonths - cutoff) < 86_400_000, months.out);
  const minutes = await task(dir.path, [
    "ingest",
    "store",
    "prune",
    "--older-than",
    "0min",
    "--dry-run",
  ], env);
  assertEquals(minutes.code, 0, minutes.err);
  assertOk(
    /^Would delete the captures last written before \d{4}-\d\d-\d\dT\S+ \(0min ago\):\nwould delete old_one\n/
      .test(minutes.out),
    minutes.out,
  );
  using store = new HarnessStore(join(dir.path, ".harness"), {
    readOnly: true,
  });
  assertEquals(store.getCapture("old_one")?.event_count, 1, "nothing deleted");
});
