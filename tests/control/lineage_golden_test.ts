import { HarnessStore } from "../../lib/store/mod.ts";
import { CaptureCoordinator } from "../../lib/control/mod.ts";
import { generateDeskEpisodes } from "../../examples/order_desk/order_desk.ts";
import { tempDir } from "../_helpers.ts";
import { assertGolden } from "../_golden.ts";

const GOLDEN = new URL("../golden/order_desk.lineage.json", import.meta.url);

/**
 * The lineage report of a fixed order-desk capture (simulated clock,
 * numbered event ids) must equal the committed golden file, so a change in
 * lineage output is a reviewed diff. Regenerate with
 * `deno task golden`.
 */
Deno.test("golden: the order-desk lineage report is the committed one", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  let t = Date.parse("2026-01-01T00:00:00.000Z");
  let n = 0;
  generateDeskEpisodes(store.sink("desk"), "desk", 12, {
    now: () => new Date(t += 5),
    newId: () => `evt_desk_${++n}`,
  });
  const report = await new CaptureCoordinator(store).lineageReport("desk");
  const body = JSON.stringify(report, null, 2) + "\n";
  assertGolden(body, GOLDEN);
});
