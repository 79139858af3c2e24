/**
 * An `--out` outside the folder a `deno task` is run from is refused before
 * any work, with the fix (not the store's `HARNESS_ROOT` advice, and not
 * Deno's "run again with --allow-write", which a task user cannot do).
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { task } from "./_tasks.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "deno task report/export/compile/compile report refuse an --out outside the user's folder at once, saying how to write it",
  async fn() {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    const elsewhere = `${dir.path}/elsewhere`;
    Deno.mkdirSync(home);
    Deno.mkdirSync(elsewhere);
    const cases = [
      ["report", "cap_1", "--out", `${elsewhere}/r.html`],
      ["export", "cap_1", "--out", `${elsewhere}/t.json`],
      ["compile", "--capture", "cap_1", "--out", `${elsewhere}/pkg`],
      ["compile", "report", "p.package.json", "--out", `${elsewhere}/p.html`],
    ];
    for (const args of cases) {
      const out = args.at(-1)!;
      const r = await task(home, args);
      assertEquals(r.code, 1, `${args.join(" ")}: ${r.err}${r.out}`);
      assertOk(
        r.err.includes(`Cannot write ${out}`) &&
          r.err.includes(
            `may write only under the folder it is run from (${home})`,
          ) &&
          r.err.includes(`--allow-write=${out}`),
        r.err,
      );
      assertOk(!/HARNESS_ROOT=DIR|run again with/.test(r.err), r.err);
    }
    assertEquals([...Deno.readDirSync(elsewhere)], []);
  },
});
