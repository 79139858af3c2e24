/**
 * Help shows paths as a user of any checkout reads them: relative to the
 * checkout (`fixtures/…`) or beside it (`../shared/…`), never a path of
 * the machine it was written on.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { CHECKOUT, task } from "./_tasks.ts";

/** The parent of the checkout: where a machine's own path would start. */
const PARENT = new URL("../", `file://${CHECKOUT}`).pathname;

/**
 * Paths of a machine in a text: under the checkout's parent or a home
 * folder (routes such as `/p/NAME/v1` are no such path).
 */
function machinePaths(text: string): string[] {
  return [...text.matchAll(/(?:^|[\s=(:'"`])(\/[\w.-]+\/[\w./-]+)/gm)]
    .map((m) => m[1])
    .filter((p) =>
      p.startsWith(PARENT) || /^\/(home|Users|root|work)\//.test(p)
    );
}

Deno.test("deno task eval --help names the full data as ../shared/…, and no help of a task names a path of this machine", async () => {
  await using dir = await tempDir();
  const evalHelp = await task(dir.path, ["eval", "--help"]);
  assertEquals(evalHelp.code, 0, evalHelp.err);
  assertOk(
    evalHelp.out.includes(
      "--data ../shared/datasets/tau-traces/tau2-bench/retail/toolorchestra_retail_1trial.json",
    ),
    evalHelp.out,
  );
  for (
    const args of [
      ["eval", "--help"],
      ["ingest", "--help"],
      ["compile", "--help"],
      ["run", "--help"],
      ["serve", "--help"],
    ]
  ) {
    const r = await task(dir.path, args);
    const text = r.out + r.err;
    assertOk(text.length > 100, `${args.join(" ")}: ${text}`);
    assertEquals(machinePaths(text), [], `deno task ${args.join(" ")}`);
    assertOk(!text.includes(CHECKOUT), `deno task ${args.join(" ")}`);
  }
});
