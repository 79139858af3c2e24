/**
 * An outcome recorded without a reason shows none in the report (it said
 * "✓ succeeded — null").
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { captureReportData } from "../../lib/report/capture_data.ts";

const FIXTURE =
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url).pathname;

Deno.test("captureReportData() gives no outcome reason for an outcome recorded without one, and the note for one with a note", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/store`;
  const imported = await runMain([
    "import",
    "--format",
    "tau2",
    FIXTURE,
    "--capture",
    "c",
    "--root",
    root,
  ]);
  assertEquals(imported.code, 0, imported.err);
  let episodes: string[];
  {
    using store = new HarnessStore(root, { readOnly: true });
    episodes = (await captureReportData(store, "c")).episodes.map((e) =>
      e.episode_id
    );
  }
  const bare = await runMain(
    ["capture", "outcome", "c", episodes[0], "--success", "--root", root],
  );
  assertEquals(bare.code, 0, bare.err);
  const noted = await runMain([
    "capture",
    "outcome",
    "c",
    episodes[1],
    "--failure",
    "--note",
    "wrong size",
    "--root",
    root,
  ]);
  assertEquals(noted.code, 0, noted.err);
  using store = new HarnessStore(root, { readOnly: true });
  const data = await captureReportData(store, "c");
  const byId = new Map(data.episodes.map((e) => [e.episode_id, e]));
  assertEquals(byId.get(episodes[0])?.outcome_reason, null);
  assertEquals(byId.get(episodes[1])?.outcome_reason, "wrong size");
});
