/**
 * The import graph of `lib/`: no file and no folder imports itself round a
 * cycle, lib/ reaches nothing outside itself (entries, examples, tests, the
 * evaluation in `eval/`), folders import only their layer and those below,
 * and the forms are plug-ins: each form's folder stands alone, `form.ts`
 * imports no form, and outside the forms' folders only the table names a
 * form or one of its node kinds.
 */
import { assertEquals, assertOk } from "./_assert.ts";
import { dirname, join, normalize, relative } from "node:path";
import { LAYERS } from "./_layers.ts";

const LIB = new URL("../lib/", import.meta.url).pathname;

/** Static imports and re-exports of every `.ts` file under `lib/`. */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) walk(p);
      else if (e.name.endsWith(".ts")) {
        const src = Deno.readTextFileSync(p);
        const deps = new Set<string>();
        for (
          const m of src.matchAll(
            /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/g,
          )
        ) {
          const q = normalize(join(dirname(p), m[1]));
          deps.add(relative(LIB, q));
        }
        graph.set(relative(LIB, p), deps);
      }
    }
  };
  walk(LIB);
  return graph;
}

/** Strongly connected components with more than one node (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let n = 0;
  const visit = (v: string) => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        on.delete(w);
        comp.push(w);
        if (w === v) break;
      }
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

Deno.test("lib/ has no import cycle between files", () => {
  assertEquals(cycles(importGraph()), []);
});

Deno.test("lib/ has no import cycle between folders", () => {
  const files = importGraph();
  const folders = new Map<string, Set<string>>();
  for (const [f, deps] of files) {
    const from = f.split("/")[0];
    const set = folders.get(from) ?? new Set<string>();
    for (const d of deps) {
      const to = d.split("/")[0];
      if (to !== from && d.includes("/")) set.add(to);
    }
    folders.set(from, set);
  }
  assertEquals(cycles(folders), []);
});

Deno.test("nothing under lib/ imports an entry, an example, a test or the evaluation", () => {
  const outside: string[] = [];
  for (const [f, deps] of importGraph()) {
    for (const d of deps) if (d.startsWith("..")) outside.push(`${f} → ${d}`);
  }
  assertEquals(outside, []);
});

Deno.test("lib/ folders import only their own layer and the layers below it", () => {
  const rank = new Map(LAYERS.map((name, i) => [name, i]));
  const folders = new Set<string>();
  const upward: string[] = [];
  for (const [f, deps] of importGraph()) {
    if (!f.includes("/")) continue;
    const from = f.split("/")[0];
    folders.add(from);
    for (const d of deps) {
      const to = d.split("/")[0];
      if (!d.includes("/") || d.startsWith("..") || to === from) continue;
      if ((rank.get(to) ?? -1) > (rank.get(from) ?? Infinity)) {
        upward.push(`${f} → ${d}`);
      }
    }
  }
  // Every folder has a place (a new one is added to LAYERS in tests/_layers.ts
  // and to ARCHITECTURE.md).
  assertEquals([...folders].filter((f) => !rank.has(f)).sort(), []);
  assertEquals(upward.sort(), []);
});

/** A form's folder under `lib/forms/` (each subfolder is one form's). */
function formFolder(f: string): string | null {
  return /^forms\/([^/]+)\//.exec(f)?.[1] ?? null;
}

/** The files of `lib/forms/` every form may import (the `Form` contract and what all forms share). */
const SHARED = new Set([
  "forms/form.ts",
  "forms/core_steps.ts",
  "forms/unservable_error.ts",
]);

/** The one file that names the forms: the table. */
const TABLE = "forms/form_table.ts";

Deno.test("lib/forms/: a form's folder imports no other form's folder nor the files above the forms; form.ts and the shared files import no form", () => {
  // Each form lives in its folder (its node kinds, compile pipeline,
  // engine, replay, explain and live drivers) and imports only the shared
  // files of `lib/forms/`; the table, `run_package.ts`, the package
  // operations and the face sit above every form.
  const crossings: string[] = [];
  const folders = new Set<string>();
  for (const [f, deps] of importGraph()) {
    const from = formFolder(f);
    if (from !== null) folders.add(from);
    const shared = SHARED.has(f);
    if (from === null && !shared) continue;
    for (const d of deps) {
      if (!d.startsWith("forms/")) continue;
      const to = formFolder(d);
      if (
        shared ? to !== null || !SHARED.has(d) : to !== from && !SHARED.has(d)
      ) {
        crossings.push(`${f} → ${d}`);
      }
    }
  }
  assertEquals(crossings, []);
  // It saw the forms' folders (a third form's folder is one more).
  assertOk(folders.has("tree") && folders.has("agent"), [...folders].join());
});

Deno.test("outside a form's folder, only the table and the faces import it", () => {
  const crossings: string[] = [];
  for (const [f, deps] of importGraph()) {
    if (formFolder(f) !== null || f === TABLE || f.endsWith("/mod.ts")) {
      continue;
    }
    for (const d of deps) {
      if (formFolder(d) !== null) crossings.push(`${f} → ${d}`);
    }
  }
  assertEquals(crossings, []);
});

/**
 * Where a line compares a value with one of `names` as a form's name or a
 * node's kind: `x.kind === "agent"`, `form.name !== "tree"`, `"lookup" ===
 * n.kind`, `case "choice":`, `["agent", …].includes(…)`.
 */
function formBranches(src: string, names: readonly string[]): string[] {
  const alt = names.join("|");
  const patterns = [
    new RegExp(`(?:kind|form|name)\\??\\s*[!=]==?\\s*"(?:${alt})"`),
    new RegExp(`"(?:${alt})"\\s*[!=]==?\\s*[\\w.?]*(?:kind|form|name)\\b`),
    new RegExp(`case\\s+"(?:${alt})"\\s*:`),
    new RegExp(
      `\\[\\s*"(?:${alt})"[^\\]]*\\]\\s*\\.\\s*(?:includes|indexOf)\\(`,
    ),
  ];
  return src.split("\n").flatMap((line, i) =>
    patterns.some((p) => p.test(line)) ? [`${i + 1}: ${line.trim()}`] : []
  );
}

Deno.test("no caller outside the forms' folders and the table names a form or branches on one", async () => {
  const { FORM_TABLE } = await import("../lib/forms/form_table.ts");
  const names = [...FORM_TABLE.names, ...FORM_TABLE.kinds.names];
  // The layers that can see a package (the package and above) and the evaluation.
  const above = new Set(LAYERS.slice(LAYERS.indexOf("package")));
  const root = new URL("../", import.meta.url).pathname;
  const found: string[] = [];
  const scan = (dir: string) => {
    for (const e of Deno.readDirSync(join(root, dir))) {
      const p = join(dir, e.name);
      if (e.isDirectory) scan(p);
      else if (e.name.endsWith(".ts")) {
        const rel = p.replace(/^lib\//, "");
        if (p.startsWith("lib/") && formFolder(rel) !== null) continue;
        if (rel === TABLE) continue;
        const hits = formBranches(Deno.readTextFileSync(join(root, p)), names);
        found.push(...hits.map((h) => `${p}:${h}`));
      }
    }
  };
  for (const layer of above) scan(join("lib", layer));
  scan("eval");
  assertEquals(found, []);
  // The check itself finds the branches it is for.
  assertEquals(
    formBranches(
      'if (root?.kind === "agent") x();\nreturn run.form === "tree";\ncase "lookup":\n["agent", "lookup"].includes(k)\nif (c.by === "lookup") y();',
      names,
    ).length,
    4,
  );
});

Deno.test("the package and the runtime import no compiler and no form file", () => {
  // `package` (the IR, the record, load, validate, digest, signature) is
  // below the compiler, the forms and the runtime; the runtime holds what
  // both forms share (tool calls, tracing) and knows neither form.
  const crossings: string[] = [];
  for (const [f, deps] of importGraph()) {
    const from = f.split("/")[0];
    if (from !== "package" && from !== "runtime") continue;
    for (const d of deps) {
      const to = d.split("/")[0];
      if (to === "compiler" || to === "forms") crossings.push(`${f} → ${d}`);
      if (from === "package" && to === "runtime") crossings.push(`${f} → ${d}`);
    }
  }
  assertEquals(crossings, []);
});
