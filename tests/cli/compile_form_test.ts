/**
 * `compile.ts --form`: the form a package is built in (the agent form is
 * what `serve --package` serves inside an agent), checked on the command
 * line.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { main as compileMain } from "../../compile.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("compile.ts --form agent|tree builds that form; another value is a usage error", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const file = new URL("../../fixtures/tau2_retail_slice.json", import.meta.url)
    .pathname;
  const imported = await runMain([
    "import",
    "--format",
    "tau2",
    file,
    "--capture",
    "retail",
    "--root",
    root,
  ]);
  assertEquals(imported.code, 0, imported.err);
  const rootKind = async (form: string) => {
    const out = join(dir.path, form);
    const code = await compileMain([
      "--capture",
      "retail",
      "--out",
      out,
      "--name",
      "retail",
      "--root",
      root,
      "--no-tune",
      "--json",
      "--form",
      form,
    ]);
    if (code !== 0) return `exit ${code}`;
    const pkg = JSON.parse(
      Deno.readTextFileSync(join(out, "retail.package.json")),
    ) as BehaviorPackage;
    return pkg.ir.nodes[pkg.ir.root].kind;
  };
  assertEquals(await rootKind("agent"), "agent");
  const tree = await rootKind("tree");
  assertOk(tree !== "agent" && !tree.startsWith("exit"), tree);
  assertEquals(await rootKind("bogus"), "exit 2");
});
