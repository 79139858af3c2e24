import { assertEquals } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { tempDir } from "../_helpers.ts";
import { assertGolden } from "../_golden.ts";

const GOLDEN = new URL("../golden/order_desk.package.json", import.meta.url);

/**
 * The order desk's compiled behavior (IR, signatures, provenance,
 * candidates, verification; not the source digests, which hash event
 * timestamps) must equal the committed golden file, so any change in
 * compiler output is a reviewed diff. Regenerate with
 * `deno task golden`.
 */
Deno.test("golden: the order-desk package is the committed one", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  const r = compileBehavior(await loadEpisodes(store, "desk"), {
    name: "order_desk",
    effects: DESK_EFFECTS,
  });
  const { ir, signatures, provenance, candidates, verification, manifest } =
    r.package;
  const body = JSON.stringify(
    { manifest, ir, signatures, provenance, candidates, verification },
    null,
    2,
  ) + "\n";
  assertGolden(body, GOLDEN);
  assertEquals(ir.nodes[ir.root].kind, "sequence");
});
