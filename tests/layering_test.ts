/**
 * The import graph of `lib/`: no file and no folder imports itself round a
 * cycle, and lib/ reaches nothing outside itself (entries, examples, tests,
 * the evaluation in `eval/`).
 */
import { assertEquals } from "./_assert.ts";
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

Deno.test("lib/forms/ rooms: tree/ and agent/ never import each other, nor the table above them", () => {
  // The forms' rooms: `tree/` and `agent/` each hold one form (its compile
  // pipeline, engine, replay and live drivers) and never import each
  // other; the files of `lib/forms/` they share are the `Form` interface
  // (`form.ts`), `core_steps.ts` and `unservable_error.ts`. The table
  // (`form_table.ts`), `run_package.ts` and the face sit above both.
  const shared = new Set([
    "forms/form.ts",
    "forms/core_steps.ts",
    "forms/unservable_error.ts",
  ]);
  const room = (f: string): string | null => {
    const m = /^forms\/(tree|agent)\//.exec(f);
    if (m) return m[1];
    if (!f.startsWith("forms/")) return null;
    return shared.has(f) ? "shared" : "top";
  };
  const forbidden: Record<string, string[]> = {
    shared: ["top"],
    tree: ["agent", "top"],
    agent: ["tree", "top"],
  };
  const crossings: string[] = [];
  const seen = new Set<string>();
  for (const [f, deps] of importGraph()) {
    const from = room(f);
    if (from === null || from === "top") continue;
    seen.add(from);
    for (const d of deps) {
      const to = room(d);
      if (to !== null && forbidden[from].includes(to)) {
        crossings.push(`${f} → ${d}`);
      }
    }
  }
  assertEquals(crossings, []);
  assertEquals([...seen].sort(), ["agent", "shared", "tree"]);
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
