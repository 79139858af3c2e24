/**
 * Names that explain themselves: in one `lib/` folder no two files have
 * names a letter apart (`event.ts` beside `events.ts`, `binding_typed.ts`
 * beside `binding_types.ts`), and no two files of `lib/` share a name
 * (`mod.ts` aside), so a name found in a stack trace, an import or a review
 * says which file it is.
 *
 * Two kinds of file are named by their folder, on purpose:
 *
 * - a plug-in's files: each subfolder of a {@link PLUGIN_FOLDERS} entry is
 *   one plug-in (a form, a model API wire), and its files are named by their
 *   part in the plug-in's contract (`gateway_driver.ts`, `read.ts`,
 *   `write.ts`), as every folder's face is `mod.ts`; they may share a name
 *   with a file anywhere else. They are still held to the one-letter rule in
 *   their folder.
 * - the {@link PENDING} names, each with the reason it waits.
 */
import { assertEquals, assertOk } from "./_assert.ts";
import { join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const LIB = join(ROOT, "lib");

/**
 * Folders whose subfolders are plug-ins: `lib/forms/<form>/` (one folder per
 * form, behind `Form`), `lib/model_gateway/wires/<wire>/` (one folder per
 * model API wire, behind its spec).
 */
const PLUGIN_FOLDERS = ["lib/forms", "lib/model_gateway/wires"];

/**
 * Names that break a rule today, each with why it waits. A name leaves this
 * list with the rename that fixes it (the test fails on a stale entry).
 */
const PENDING: Record<string, string> = {};

/** Every `.ts` file under `lib/`, repository-relative, sorted. */
function libFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) walk(p);
      else if (e.name.endsWith(".ts")) out.push(relative(ROOT, p));
    }
  };
  walk(LIB);
  return out.sort();
}

function folderOf(file: string): string {
  return file.slice(0, file.lastIndexOf("/"));
}

function nameOf(file: string): string {
  return file.slice(file.lastIndexOf("/") + 1);
}

/** Whether `a` and `b` differ by one letter: one changed, added or dropped. */
function oneLetterApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  if (a.length === b.length) {
    let n = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
    return n === 1;
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  return short.slice(i) === long.slice(i + 1);
}

/** Whether `file` sits directly in one plug-in's folder. */
function inPlugin(file: string): boolean {
  const parent = folderOf(folderOf(file));
  return PLUGIN_FOLDERS.includes(parent);
}

/** Pairs of files in one folder whose names (without `.ts`) are a letter apart. */
function letterPairs(files: string[]): string[] {
  const byFolder = new Map<string, string[]>();
  for (const f of files) {
    byFolder.set(folderOf(f), [...byFolder.get(folderOf(f)) ?? [], f]);
  }
  const pairs: string[] = [];
  for (const group of byFolder.values()) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const [a, b] = [group[i], group[j]];
        if (oneLetterApart(nameOf(a).slice(0, -3), nameOf(b).slice(0, -3))) {
          pairs.push(`${a} ~ ${b}`);
        }
      }
    }
  }
  return pairs;
}

/** Names (not `mod.ts`, not a plug-in's files) held by more than one file. */
function sharedNames(files: string[]): string[] {
  const byName = new Map<string, string[]>();
  for (const f of files) {
    if (nameOf(f) === "mod.ts" || inPlugin(f)) continue;
    byName.set(nameOf(f), [...byName.get(nameOf(f)) ?? [], f]);
  }
  return [...byName.values()].filter((g) => g.length > 1).map((g) =>
    g.join(" = ")
  );
}

/** The findings that name no pending file. */
function unexcused(findings: string[]): string[] {
  return findings.filter((line) =>
    line.split(/ [~=] /).some((f) => !(f in PENDING))
  );
}

Deno.test("oneLetterApart: a changed, added or dropped letter, nothing more", () => {
  assertEquals(
    [
      ["event", "events"],
      ["events", "event"],
      ["binding_typed", "binding_types"],
      ["host_a", "host_b"],
      ["read", "reads"],
      ["aread", "read"],
    ].map(([a, b]) => oneLetterApart(a, b)),
    [true, true, true, true, true, true],
  );
  assertEquals(
    [
      ["event", "event"],
      ["event", "make_event"],
      ["model_events", "tool_events"],
      ["read", "write"],
      ["ab", "ba"],
    ].map(([a, b]) => oneLetterApart(a, b)),
    [false, false, false, false, false],
  );
});

Deno.test("the rules find what they are for", () => {
  const files = [
    "lib/trace/event.ts",
    "lib/trace/events.ts",
    "lib/trace/model_events.ts",
    "lib/runtime/model_events.ts",
    "lib/trace/mod.ts",
    "lib/runtime/mod.ts",
    "lib/forms/tree/gateway_driver.ts",
    "lib/forms/agent/gateway_driver.ts",
    "lib/forms/tree/read.ts",
    "lib/forms/tree/reads.ts",
  ];
  assertEquals(letterPairs(files), [
    "lib/trace/event.ts ~ lib/trace/events.ts",
    "lib/forms/tree/read.ts ~ lib/forms/tree/reads.ts",
  ]);
  assertEquals(sharedNames(files), [
    "lib/trace/model_events.ts = lib/runtime/model_events.ts",
  ]);
});

Deno.test("lib/: no two files in one folder have names a letter apart", () => {
  assertEquals(unexcused(letterPairs(libFiles())), []);
});

Deno.test("lib/: no two files share a name, but mod.ts and a plug-in's parts", () => {
  assertEquals(unexcused(sharedNames(libFiles())), []);
});

Deno.test("every pending name still exists and still breaks a rule", () => {
  const files = libFiles();
  const findings = [...letterPairs(files), ...sharedNames(files)].join("\n");
  const stale = Object.keys(PENDING).filter((f) =>
    !files.includes(f) || !findings.includes(f)
  );
  assertEquals(stale, []);
  assertOk(files.length > 100, `saw only ${files.length} files under lib/`);
});
