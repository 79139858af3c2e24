/**
 * Tests mirror `lib/` folder for folder. The rule:
 *
 * - every `lib/<room>/` has a `tests/<room>/`;
 * - every folder of `tests/` is a room of `lib/` or one of {@link OTHER_ROOMS}
 *   (what has no `lib/` folder: docs and schemas, the evaluation, golden data);
 * - a test file in `tests/<room>/` that calls `lib/` code in-process imports
 *   from `lib/<room>/` at least once (`import type` is no call): a test sits in
 *   the room of the code it tests;
 * - exempt: a test that drives the product from outside, through its own text
 *   or a `tests/` or `bench/` helper it imports: it names an entry
 *   (`ingest.ts`, `compile.ts`, `proxy.ts`) in a string, runs a `deno task`,
 *   or starts the real server with `tests/_server.ts` or the CLI with
 *   `tests/_cli.ts`. It sits in the room whose behaviour it checks (a CLI
 *   test in `tests/cli/`); the `lib/` code it imports only sets up or reads
 *   the record;
 * - every `.ts` file under `tests/` is a test (`*_test.ts`) or a helper whose
 *   name or folder starts with `_`, all snake_case (a `foo.ts` holding
 *   `Deno.test` would never run).
 */
import { assertEquals, assertOk } from "./_assert.ts";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const TESTS = join(ROOT, "tests");
const LIB = join(ROOT, "lib");

/** Folders of `tests/` with no `lib/` room, and what each holds. */
const OTHER_ROOMS: Record<string, string> = {
  docs: "docs/ and docs/schema/",
  eval: "eval/ (the evaluation)",
  envs: "eval/envs/ (the τ² environments)",
  golden: "golden data the compiler and control tests compare with",
};

/** The entry modules of the checkout. */
const ENTRIES = ["ingest.ts", "compile.ts", "proxy.ts"];

/** The helpers that start the product itself (the server, the CLI). */
const DRIVERS = ["tests/_server.ts", "tests/_cli.ts"];

function folders(dir: string): string[] {
  return [...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((e) =>
    e.name
  ).sort();
}

function files(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) =>
    e.isDirectory ? files(join(dir, e.name)) : [join(dir, e.name)]
  ).sort();
}

interface Imports {
  /** The `lib/` rooms imported by value (not `import type`). */
  rooms: Set<string>;
  /** Test and bench helpers imported (repository-relative). */
  helpers: string[];
  /** Whether the text names an entry or runs a `deno task`. */
  entry: boolean;
}

/** What the source of `file` (repository-relative) imports and names. */
function importsOf(file: string, src: string): Imports {
  const rooms = new Set<string>();
  const helpers: string[] = [];
  let entry = /args:\s*\[\s*"task"/.test(src);
  const specifiers: [string, boolean][] = [];
  for (
    const m of src.matchAll(
      /(?:^|\n)\s*(import|export)(\s+type)?\s[^;]*?from\s+"(\.[^"]+)"/g,
    )
  ) specifiers.push([m[3], m[2] !== undefined]);
  for (const m of src.matchAll(/(?:^|\n)\s*import\s+"(\.[^"]+)"/g)) {
    specifiers.push([m[1], false]);
  }
  for (const m of src.matchAll(/import\(\s*"(\.[^"]+)"\s*\)/g)) {
    specifiers.push([m[1], false]);
  }
  for (const [spec, typeOnly] of specifiers) {
    const to = normalize(join(dirname(file), spec));
    if (to.startsWith("lib/") && !typeOnly) rooms.add(to.split("/")[1]);
    if (to.startsWith("tests/") || to.startsWith("bench/")) helpers.push(to);
    if (ENTRIES.includes(to)) entry = true;
  }
  // An entry named in a string: bare (a `deno run` argument from the
  // checkout), relative to the file, or under a variable holding the checkout.
  for (
    const m of src.matchAll(
      /["'`]((?:\.{1,2}\/)*|\$\{\w+\}\/?)(ingest|compile|proxy)\.ts["'`]/g,
    )
  ) {
    const prefix = m[1];
    if (prefix === "" || prefix.startsWith("$")) entry = true;
    else if (
      normalize(join(dirname(file), prefix + m[2] + ".ts")) === `${m[2]}.ts`
    ) {
      entry = true;
    }
  }
  return { rooms, helpers, entry };
}

/** Whether `file` drives the product from outside (see the rule above). */
function drivesFromOutside(
  file: string,
  read: (file: string) => string | null,
  seen = new Set<string>(),
): boolean {
  if (DRIVERS.includes(file)) return true;
  if (seen.has(file)) return false;
  seen.add(file);
  const src = read(file);
  if (src === null) return false;
  const found = importsOf(file, src);
  return found.entry ||
    found.helpers.some((h) => drivesFromOutside(h, read, seen));
}

/**
 * Why the test file `file` (repository-relative, `tests/<room>/…`) breaks the
 * room rule, or null when it keeps it.
 */
function misplaced(
  file: string,
  src: string,
  read: (file: string) => string | null,
): string | null {
  const room = file.split("/")[1];
  if (room in OTHER_ROOMS) return null;
  const { rooms } = importsOf(file, src);
  if (rooms.size === 0 || rooms.has(room)) return null;
  if (drivesFromOutside(file, (f) => f === file ? src : read(f))) return null;
  return `${file} imports lib/${
    [...rooms].sort().join(", lib/")
  } but not lib/${room}`;
}

function readRepo(file: string): string | null {
  try {
    return Deno.readTextFileSync(join(ROOT, file));
  } catch {
    return null;
  }
}

Deno.test("tests/: every lib/ room has its folder, and every folder is a lib/ room or a named other room", () => {
  const lib = folders(LIB);
  const tests = folders(TESTS);
  assertEquals(lib.filter((room) => !tests.includes(room)), []);
  assertEquals(
    tests.filter((dir) => !lib.includes(dir) && !(dir in OTHER_ROOMS)),
    [],
  );
  // An other room named here is still there (the list does not go stale).
  assertEquals(Object.keys(OTHER_ROOMS).filter((d) => !tests.includes(d)), []);
});

Deno.test("tests/: every .ts file is a snake_case test (*_test.ts) or a helper under an _ name", () => {
  const stray: string[] = [];
  for (const f of files(TESTS)) {
    if (!f.endsWith(".ts")) continue;
    const rel = relative(ROOT, f);
    const name = rel.split("/").at(-1)!;
    const snake = rel.split("/").slice(1).every((part) =>
      /^_?[a-z0-9]+(?:_[a-z0-9]+)*(?:\.ts)?$/.test(part)
    );
    const helper = rel.split("/").slice(1).some((part) => part.startsWith("_"));
    if (!snake || !(name.endsWith("_test.ts") || helper)) stray.push(rel);
  }
  assertEquals(stray, []);
});

Deno.test("tests/<room>/: a test that calls lib/ code in-process imports lib/<room>/ (a test of the product from outside is exempt)", () => {
  const found: string[] = [];
  let checked = 0;
  for (const f of files(TESTS)) {
    const rel = relative(ROOT, f);
    if (!rel.endsWith("_test.ts") || rel.split("/").length < 3) continue;
    checked++;
    const why = misplaced(rel, Deno.readTextFileSync(f), readRepo);
    if (why !== null) found.push(why);
  }
  assertEquals(found, []);
  assertOk(checked > 100, `only ${checked} test files seen`);
});

Deno.test("the room rule fails a misplaced test and exempts a test of the product from outside", () => {
  // A forms test put back in tests/compiler/, where the agent form's tests were.
  const tuning = "tests/forms/agent_tuning_test.ts";
  const src = readRepo(tuning)!;
  assertEquals(misplaced(tuning, src, readRepo), null);
  assertEquals(
    misplaced("tests/compiler/agent_tuning_test.ts", src, readRepo),
    "tests/compiler/agent_tuning_test.ts imports lib/forms but not lib/compiler",
  );
  // A CLI test spawning `deno task …` through tests/cli/_tasks.ts imports
  // lib/store only to write what the command then reads.
  const prune = "tests/cli/prune_age_test.ts";
  assertEquals(misplaced(prune, readRepo(prune)!, readRepo), null);
  const inProcess = 'import { HarnessStore } from "../../lib/store/mod.ts";\n';
  assertEquals(
    misplaced("tests/cli/x_test.ts", inProcess, readRepo),
    "tests/cli/x_test.ts imports lib/store but not lib/cli",
  );
  for (
    const driver of [
      'const r = new Deno.Command(Deno.execPath(), { args: ["run", "compile.ts"] });\n',
      'const { main } = await import("../../ingest.ts");\n',
      'import { startServer } from "../_server.ts";\n',
    ]
  ) {
    assertEquals(
      misplaced("tests/cli/x_test.ts", inProcess + driver, readRepo),
      null,
      driver,
    );
  }
  // A type is no call.
  assertEquals(
    misplaced(
      "tests/cli/x_test.ts",
      'import type { HarnessStore } from "../../lib/store/mod.ts";\n',
      readRepo,
    ),
    null,
  );
});
