/**
 * `compile` keeps an earlier package of the same name unless told
 * (`--replace`), and `explain`/`report` say when a package was altered after
 * compile (as `run` refuses it) instead of showing it without a word.
 *
 * @module
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { runMain } from "../_cli.ts";
import { main as compileMain } from "../../compile.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";

async function compileCli(
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const { log, error } = console;
  let out = "", err = "";
  console.log = (...a: unknown[]) => out += a.join(" ") + "\n";
  console.error = (...a: unknown[]) => err += a.join(" ") + "\n";
  try {
    return { code: await compileMain(args), out, err };
  } finally {
    console.log = log;
    console.error = error;
  }
}

Deno.test("compile.ts refuses to overwrite a package of the same name before compiling, and --replace overwrites it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  {
    using store = new HarnessStore(root);
    generateDeskEpisodes(store.sink("desk"), "desk", 30);
  }
  const effects = join(dir.path, "effects.json");
  Deno.writeTextFileSync(effects, JSON.stringify(DESK_EFFECTS));
  const out = join(dir.path, "out");
  const args = ["--capture", "desk", "--out", out, "--root", root];
  const args2 = [...args, "--effects", effects];
  assertEquals((await compileCli(args)).code, 0);
  const file = join(out, "behavior.package.json");
  const first = Deno.readTextFileSync(file);

  const again = await compileCli(args2);
  assertEquals(again.code, 2);
  assertMatch(again.err, /behavior\.package\.json exists \(sha256:/);
  assertMatch(again.err, /--name NAME .* or --replace to overwrite it/);
  assertEquals(Deno.readTextFileSync(file), first);

  const replaced = await compileCli([...args2, "--replace"]);
  assertEquals(replaced.code, 0, replaced.err);
  assertEquals(Deno.readTextFileSync(file) === first, false);
});

Deno.test("compile.ts explain and report warn and exit 1 on a package altered after compile", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  {
    using store = new HarnessStore(root);
    generateDeskEpisodes(store.sink("desk"), "desk", 30);
  }
  const out = join(dir.path, "out");
  assertEquals(
    (await compileCli(["--capture", "desk", "--out", out, "--root", root]))
      .code,
    0,
  );
  const file = join(out, "behavior.package.json");
  const clean = await compileCli(["explain", file]);
  assertEquals([clean.code, /altered/.test(clean.err)], [0, false]);

  const pkg = JSON.parse(Deno.readTextFileSync(file));
  pkg.manifest.version = "9.9.9";
  Deno.writeTextFileSync(file, JSON.stringify(pkg));
  const text = await compileCli(["explain", file]);
  assertEquals(text.code, 1);
  assertMatch(text.err, /WARNING: this package was altered after compile/);
  const json = await compileCli(["explain", file, "--json"]);
  assertEquals([json.code, JSON.parse(json.out).digest_ok], [1, false]);
  const report = await compileCli([
    "report",
    file,
    "--out",
    join(dir.path, "p.html"),
  ]);
  assertEquals(report.code, 1);
  assertMatch(report.err, /run refuses it/);
});

Deno.test("compile.ts and explain print the evidence grade legend under the grades; capture inspect prints the fidelity legend", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  {
    using store = new HarnessStore(root);
    generateDeskEpisodes(store.sink("desk"), "desk", 20);
  }
  const out = join(dir.path, "out");
  const compiled = await compileCli(
    ["--capture", "desk", "--out", out, "--root", root],
  );
  assertEquals(compiled.code, 0, compiled.err);
  assertMatch(
    compiled.out,
    /grades: E0 contested or seen once, .* E4 replayed clean/,
  );
  const explained = await compileCli(
    ["explain", join(out, "behavior.package.json")],
  );
  assertMatch(explained.out, /\ngrades: E0 contested/);
  const inspect = await runMain(["capture", "inspect", "desk", "--root", root]);
  assertEquals(inspect.code, 0, inspect.err);
  assertMatch(
    inspect.out,
    /fidelity: F0 no usable evidence, F1 messages, F2 tool calls, .*F4 state plus model requests/,
  );
});
