import { assertEquals } from "../_assert.ts";
import { killOverHttp, tornTailSweep } from "../../bench/_reliability.ts";
import { tempDir } from "../_helpers.ts";

Deno.test({
  name:
    "kill -9 of a real ingest server over HTTP, 4 times: every acknowledged event is stored exactly once, the chain verifies",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const r = await killOverHttp(dir.path, 4);
    assertEquals(
      [r.lost, r.duplicated, r.chains_ok],
      [0, 0, true],
      JSON.stringify(r),
    );
    assertEquals(r.acknowledged > 0, true);
  },
});

Deno.test("a torn last line, cut at every byte offset, is set aside exactly and the chain before it verifies", async () => {
  await using dir = await tempDir();
  const r = await tornTailSweep(dir.path, 120);
  assertEquals(r.repaired_and_verified, r.offsets, JSON.stringify(r));
  assertEquals(r.set_aside_exactly, r.offsets, JSON.stringify(r));
  assertEquals(r.offsets > 200, true);
});
