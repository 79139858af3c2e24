/**
 * `deno task eval` as a newcomer runs it from their own folder: the data
 * in the checkout by default, progress on stderr, results where `--out`
 * says or in a printed scratch folder, and the tracked `bench/out/` files
 * untouched.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { CHECKOUT, task } from "../cli/_tasks.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function tracked(): string {
  return ["tau_eval.md", "tau_eval.json"].map((f) => {
    try {
      return Deno.readTextFileSync(`${CHECKOUT}bench/out/${f}`);
    } catch {
      return "";
    }
  }).join("\n");
}

Deno.test({
  ...opts,
  name:
    "deno task eval reads the checkout's data by default, shows each seed on stderr, and writes where --out says or to a printed scratch folder, never bench/out",
  async fn() {
    await using dir = await tempDir();
    const before = tracked();

    const named = await task(dir.path, [
      "eval",
      "--seeds",
      "1",
      "--out",
      "res",
    ]);
    assertEquals(named.code, 0, named.err);
    assertOk(/fixtures\/tau2_retail_slice\.json/.test(named.err), named.err);
    assertOk(
      /eval: seed 1\/1: \d+ held-out episodes/.test(named.err),
      named.err,
    );
    assertOk(Deno.statSync(`${dir.path}/res/tau_eval.md`).isFile);
    assertOk(Deno.statSync(`${dir.path}/res/tau_eval.json`).isFile);

    const scratch = await task(dir.path, ["eval", "--seeds", "1", "--json"]);
    assertEquals(scratch.code, 0, scratch.err);
    const where = /wrote tau_eval\.md and tau_eval\.json to (\S+)/.exec(
      scratch.err,
    )?.[1];
    assertOk(where?.startsWith(`${CHECKOUT}.tmp/eval_`), scratch.err);
    try {
      assertEquals(
        JSON.parse(Deno.readTextFileSync(`${where}/tau_eval.json`)).seeds,
        JSON.parse(scratch.out).seeds,
      );
    } finally {
      // The test may write only /tmp: the scratch folder goes as it came.
      await new Deno.Command(Deno.execPath(), {
        args: [
          "eval",
          `Deno.removeSync(${JSON.stringify(where)}, { recursive: true })`,
        ],
      }).output();
    }
    assertEquals(tracked(), before);
  },
});
