/**
 * An import whose trajectories record no outcome says so: it said
 * "(510 events, 0 successful)", which reads as every episode failed
 * (issue 48, item 6). A file with outcomes still counts the successful ones.
 *
 * @module
 */
import { join } from "node:path";
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";

const TAU2 =
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url).pathname;

Deno.test("import: no outcomes recorded is not 0 successful", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "s");
  const plain = join(dir.path, "plain.json");
  Deno.writeTextFileSync(
    plain,
    JSON.stringify([{
      messages: [
        { role: "user", content: "Find Ana" },
        { role: "assistant", content: "Found Ana." },
      ],
    }]),
  );
  const r = await runMain(
    ["import", plain, "--format", "openai-messages", "--capture", "p"]
      .concat(["--root", root]),
  );
  assertEquals(r.code, 0, r.err);
  assertOk(
    /Imported 1 episode \(\d+ events, no outcomes recorded\)/.test(r.out),
    r.out,
  );
  const j = await runMain(
    ["import", plain, "--format", "openai-messages", "--capture", "p2"]
      .concat(["--root", root, "--json"]),
  );
  assertEquals(JSON.parse(j.out).with_outcome, 0);
  const t = await runMain(
    ["import", TAU2, "--format", "tau2", "--capture", "t", "--root", root],
  );
  assertEquals(t.code, 0, t.err);
  assertOk(/events, \d+ successful\)/.test(t.out), t.out);
});
