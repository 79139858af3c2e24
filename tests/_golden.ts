/**
 * Golden-file comparison shared by the golden tests.
 *
 * `deno task test` compares; `deno task golden` runs only the golden tests
 * with `UPDATE_GOLDEN=1` and write access to `tests/golden/`, so it rewrites
 * the files and then checks that what was written is what was computed.
 *
 * @module
 */
import { assertEquals } from "./_assert.ts";

/** The command that regenerates the golden files. */
export const GOLDEN_COMMAND = "deno task golden";

/**
 * Asserts that `actual` equals the golden file at `golden`. In update mode
 * (`UPDATE_GOLDEN=1`) it first writes `actual` to the file, reads it back and
 * compares the computed text with the text read, so a write that did not land
 * still fails; a changed file is named on stdout for the review.
 *
 * @param actual The text computed by the test.
 * @param golden The golden file.
 * @throws {Error} In update mode without write access to the golden file.
 */
export function assertGolden(actual: string, golden: URL): void {
  const name = golden.pathname.slice(golden.pathname.indexOf("/tests/") + 1);
  if (Deno.env.get("UPDATE_GOLDEN") !== "1") {
    assertEquals(
      actual,
      Deno.readTextFileSync(golden),
      `${name} differs from the computed output; review the diff, then run ${GOLDEN_COMMAND}`,
    );
    return;
  }
  const write = Deno.permissions.querySync({ name: "write", path: golden });
  if (write.state !== "granted") {
    throw new Error(
      `Cannot update golden file "${name}": no write access; run ${GOLDEN_COMMAND}`,
    );
  }
  let before: string | undefined;
  try {
    before = Deno.readTextFileSync(golden);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  Deno.writeTextFileSync(golden, actual);
  const written = Deno.readTextFileSync(golden);
  assertEquals(actual, written, `${name} was not written as computed`);
  if (before !== actual) console.log(`golden: rewrote ${name}`);
}
