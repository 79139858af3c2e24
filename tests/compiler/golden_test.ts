import { assertEquals } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/package.ts";
import { tempDir } from "../_helpers.ts";

const GOLDEN = new URL("../golden/order_desk.package.json", import.meta.url);

/**
 * The order desk's compiled behavior (IR, signatures, provenance,
 * candidates, verification; not the source digests, which hash event
 * timestamps) must equal the committed golden file, so any change in
 * compiler output is a reviewed diff. Regenerate with
 * `UPDATE_GOLDEN=1 deno task test tests/compiler/golden_test.ts`.
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
  if (Deno.env.get("UPDATE_GOLDEN") === "1") {
    Deno.writeTextFileSync(GOLDEN, body);
  }
  assertEquals(body, Deno.readTextFileSync(GOLDEN));
  assertEquals(ir.nodes[ir.root].kind, "sequence");
});
