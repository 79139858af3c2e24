/**
 * A mistyped flag, as a newcomer types it into a `deno task`: the error
 * names the flag meant, quotes nothing unbalanced, and names the command
 * the user typed (the task), not the entry module.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { task } from "./_tasks.ts";

/** Whether the message (the first line) closes every double quote it opens. */
function balanced(text: string): boolean {
  return text.split("\n")[0].split('"').length % 2 === 1;
}

Deno.test("deno task serve --pakage: 'did you mean --package?', serve's own help under the task's name, quotes balanced", async () => {
  await using dir = await tempDir();
  const r = await task(dir.path, ["serve", "--pakage", "out/x.package.json"]);
  assertEquals(r.code, 2, r.err);
  assertOk(
    r.err.startsWith(
      "harness: unknown flag --pakage: did you mean --package?\n",
    ),
    r.err,
  );
  assertOk(/^ {2}deno task serve \[--host H\]/m.test(r.err), r.err);
  assertOk(!r.err.includes("ingest.ts"), r.err);
  assertOk(balanced(r.err) && !r.err.split("\n")[0].includes("'"), r.err);
  assertEquals(r.out, "");
});

Deno.test("deno task ingest capture list --rot: names --root and the task; an unknown flag with no near one says where a dash-value goes", async () => {
  await using dir = await tempDir();
  const near = await task(dir.path, [
    "ingest",
    "capture",
    "list",
    "--rot",
    "x",
  ]);
  assertEquals(near.code, 2, near.err);
  assertOk(
    /unknown flag --rot: did you mean --root\?/.test(near.err),
    near.err,
  );
  assertOk(/^ {2}deno task ingest capture list/m.test(near.err), near.err);
  const far = await task(dir.path, ["compile", "--zzz"]);
  assertEquals(far.code, 2, far.err);
  assertOk(
    far.err.startsWith(
      'harness compile: unknown flag --zzz: the command\'s flags are in its help (a value that starts with "-" goes after "--")',
    ),
    far.err,
  );
  assertOk(/Run deno task compile --help/.test(far.err), far.err);
  assertOk(balanced(far.err), far.err);
});

Deno.test("deno task proxy --capure: 'did you mean --capture?' and where the upstream's flags go", async () => {
  await using dir = await tempDir();
  const r = await task(dir.path, ["proxy", "--capure", "x", "--", "echo"]);
  assertEquals(r.code, 2, r.err);
  assertOk(
    r.err.startsWith(
      "harness proxy: unknown flag --capure: did you mean --capture? (the upstream's own flags go after --)\n",
    ),
    r.err,
  );
  assertOk(balanced(r.err), r.err);
});
