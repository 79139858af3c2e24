/**
 * ARCHITECTURE.md and docs/decisions.md against the tree:
 *
 * - every repository path they name in backticks exists (a token with a
 *   `/` whose first segment is a top-level entry is taken from the root;
 *   a bare file name in a map entry `- **`lib/<folder>/`**` is taken from
 *   that folder, elsewhere from the root or, failing that, anywhere in
 *   the tree);
 * - every folder directly under `lib/` has a map entry, the map is in
 *   layer order, and the "Layers" line gives the order `tests/_layers.ts`
 *   holds (the list `tests/layering_test.ts` enforces);
 * - each map entry names the subpath exports `deno.json` points into its
 *   folder, and every `./name` written is an export;
 * - ARCHITECTURE.md has at most 150 lines and writes no counts (they go
 *   stale; a reader who wants one computes it);
 * - its "Hosts" table maps the contract's `host_a`, `host_b`, `host_c` to
 *   Claude Code (hooks), Gemini CLI (hooks) and OpenCode (plugin), once;
 * - their links resolve (files and `#anchors`), and so do the links into
 *   them from README.md and `docs/*.md`.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { LAYERS } from "../_layers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ARCHITECTURE = "ARCHITECTURE.md";
const DECISIONS = "docs/decisions.md";
const MAX_LINES = 150;

/** Files and folders of the repository (relative, folders with a `/`). */
function repositoryTree(): Set<string> {
  const out = new Set<string>();
  const skip = new Set([".git", "node_modules", ".harness", ".tmp"]);
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(ROOT + rel)) {
      if (skip.has(e.name)) continue;
      const p = rel + e.name;
      if (e.isDirectory) {
        out.add(p + "/");
        walk(p + "/");
      } else out.add(p);
    }
  };
  walk("");
  return out;
}

const TREE = repositoryTree();
const TOP = new Set(
  [...TREE].filter((p) => !p.slice(0, -1).includes("/")).map((p) =>
    p.replace(/\/$/, "")
  ),
);

/** Whether a relative path (a folder may end in `/`) is in the tree. */
function exists(path: string): boolean {
  const p = path.replace(/^\.\//, "");
  return TREE.has(p) || TREE.has(p + "/") ||
    (p.endsWith("/") && TREE.has(p));
}

/** Whether a path's file name is anywhere in the tree. */
function nameAnywhere(name: string): boolean {
  for (const p of TREE) {
    if (p === name || p.endsWith("/" + name)) return true;
  }
  return false;
}

const PATH_LIKE = /^[A-Za-z0-9_.][A-Za-z0-9_.\-]*(\/[A-Za-z0-9_.\-]+)*\/?$/;
const FILE_LIKE = /\.(ts|md|json|sh|mjs|js|jsonl)$/;

/** A markdown text as entries: a list item with its continuation lines, or one other line. */
function entries(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  const lines = text.split("\n");
  lines.forEach((l, i) => {
    const last = out.at(-1);
    if (last && /^ {2,}\S/.test(l) && last.text.startsWith("- ")) {
      last.text += " " + l.trim();
    } else out.push({ text: l, line: i + 1 });
  });
  return out;
}

/** The folder a map entry is about (`lib/trace/`), or null. */
function mapFolder(entry: string): string | null {
  return /^- \*\*`(lib\/[a-z_]+\/)`\*\*/.exec(entry)?.[1] ?? null;
}

/**
 * Backticked repository paths that do not exist.
 *
 * @param text A markdown text.
 * @returns `line: path` for each missing one.
 */
export function missingPaths(text: string): string[] {
  const missing: string[] = [];
  for (const { text: entry, line } of entries(text)) {
    const folder = mapFolder(entry);
    for (const m of entry.matchAll(/`([^`\s]+)`/g)) {
      const token = m[1];
      if (token.startsWith("./") || token === ".") continue; // subpath exports
      if (!PATH_LIKE.test(token)) continue;
      const first = token.split("/")[0];
      const fromTop = TOP.has(first);
      if (token.includes("/") && !fromTop && folder === null) continue; // a MIME type, a route
      if (!token.includes("/") && !FILE_LIKE.test(token)) continue;
      const ok = fromTop
        ? exists(token)
        : folder !== null
        ? exists(folder + token)
        : exists(token) || nameAnywhere(token);
      if (!ok) missing.push(`${line}: ${token}`);
    }
  }
  return missing;
}

/** The map's folders, in the order written. */
function mapFolders(text: string): string[] {
  return entries(text).flatMap((e) => {
    const folder = mapFolder(e.text);
    return folder === null ? [] : [folder.slice(4, -1)];
  });
}

/** The "Layers" order: the backticked names of its arrow line. */
function layersLine(text: string): string[] {
  const section = /^## Layers\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)?.[1];
  if (!section) return [];
  const para = section.split("\n\n").find((p) => p.includes("→")) ?? "";
  return [...para.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
}

/** Folders directly under `lib/`. */
function libFolders(): string[] {
  return [...Deno.readDirSync(ROOT + "lib")].filter((e) => e.isDirectory)
    .map((e) => e.name).sort();
}

/** `deno.json`'s exports. */
function exportsMap(): Record<string, string> {
  return JSON.parse(Deno.readTextFileSync(ROOT + "deno.json")).exports;
}

/**
 * Map entries whose subpath exports differ from `deno.json`'s, and
 * `./name`s that are no export.
 *
 * @param text ARCHITECTURE.md.
 * @returns One line per disagreement.
 */
export function exportProblems(text: string): string[] {
  const exports = exportsMap();
  const out: string[] = [];
  for (const { text: entry, line } of entries(text)) {
    const folder = mapFolder(entry);
    if (folder !== null) {
      const paren = /^- \*\*`lib\/[a-z_]+\/`\*\* \(([^)]*)\)/.exec(entry)?.[1];
      const named = [...(paren ?? "").matchAll(/`(\.(?:\/[a-z_]+)?)`/g)]
        .map((m) => m[1]).sort();
      const actual = Object.entries(exports)
        .filter(([, target]) => target.startsWith("./" + folder))
        .map(([key]) => key).sort();
      if (named.join() !== actual.join()) {
        out.push(
          `${line}: ${folder} names [${named}], deno.json exports [${actual}]`,
        );
      }
    }
    for (const m of entry.matchAll(/`(\.(?:\/[a-z_]+)?)`/g)) {
      if (!(m[1] in exports)) out.push(`${line}: ${m[1]} is no export`);
    }
  }
  return out;
}

/**
 * Counts written where they go stale: an export count in brackets, a line
 * or export count.
 *
 * @param text ARCHITECTURE.md.
 * @returns The lines that write one.
 */
export function writtenCounts(text: string): string[] {
  return text.split("\n").flatMap((l, i) =>
    /\(\d+\)|\b\d+ (lines|exports|exported names|files)\b/.test(l)
      ? [`${i + 1}: ${l.trim()}`]
      : []
  );
}

/** GitHub's anchors of a markdown text's headings. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1].trim().toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/**
 * Links of a markdown file that do not resolve (files relative to it, and
 * anchors among the target's headings).
 *
 * @param file The file, relative to the root.
 * @param only When given, check only links whose file is one of these.
 * @returns `file:line: target` for each broken one.
 */
export function brokenLinks(file: string, only?: string[]): string[] {
  const text = Deno.readTextFileSync(ROOT + file);
  const dir = file.includes("/")
    ? file.slice(0, file.lastIndexOf("/") + 1)
    : "";
  const out: string[] = [];
  text.split("\n").forEach((l, i) => {
    for (const m of l.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/.test(target)) continue; // http:, mailto:
      const [path, anchor] = target.split("#");
      const resolved = path === ""
        ? file
        : new URL(path, "file:///" + dir).pathname.slice(1);
      if (only && !only.includes(resolved)) continue;
      if (!exists(resolved)) {
        out.push(`${file}:${i + 1}: ${target}`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith(".md")) {
        const heads = anchors(Deno.readTextFileSync(ROOT + resolved));
        if (!heads.has(anchor)) out.push(`${file}:${i + 1}: ${target}`);
      }
    }
  });
  return out;
}

const architecture = Deno.readTextFileSync(ROOT + ARCHITECTURE);
const decisions = Deno.readTextFileSync(ROOT + DECISIONS);

Deno.test("ARCHITECTURE.md: every path it names exists", () => {
  assertEquals(missingPaths(architecture), []);
});

Deno.test("ARCHITECTURE.md: every folder of lib/ has a map entry, in layer order", () => {
  assertEquals([...mapFolders(architecture)].sort(), libFolders());
  assertEquals(mapFolders(architecture), [...LAYERS]);
});

Deno.test("ARCHITECTURE.md: the layers are tests/layering_test.ts's, in its order", () => {
  assertEquals(layersLine(architecture), [...LAYERS]);
});

Deno.test("ARCHITECTURE.md: each map entry names deno.json's subpath exports into its folder", () => {
  assertEquals(exportProblems(architecture), []);
  // Every export is named somewhere.
  const unnamed = Object.keys(exportsMap()).filter((key) =>
    !architecture.includes("`" + key + "`")
  );
  assertEquals(unnamed, []);
});

Deno.test("ARCHITECTURE.md: at most 150 lines, and no counts written", () => {
  const lines = architecture.trimEnd().split("\n").length;
  assertOk(lines <= MAX_LINES, `ARCHITECTURE.md has ${lines} lines`);
  assertEquals(writtenCounts(architecture), []);
});

Deno.test("ARCHITECTURE.md: the contract's host names are mapped once, to the real hosts", () => {
  const section = /^## Hosts\n([\s\S]*?)(?=^## )/m.exec(architecture)?.[1] ??
    "";
  const rows = section.split("\n").filter((l) => /^\| `host_[abc]` \|/.test(l))
    .map((l) => l.split("|").slice(1, 5).map((c) => c.trim()));
  assertEquals(rows, [
    ["`host_a`", "Claude Code", "`claude-code`", "hooks"],
    ["`host_b`", "Gemini CLI", "`gemini-cli`", "hooks"],
    ["`host_c`", "OpenCode", "`opencode`", "plugin"],
  ]);
  // Once: no other table row of the map maps them again.
  const elsewhere = architecture.replace(section, "").split("\n").filter((l) =>
    /^\|.*`host_[abc]`/.test(l)
  );
  assertEquals(elsewhere, []);
});

Deno.test("ARCHITECTURE.md and docs/decisions.md: their links resolve", () => {
  assertEquals([...brokenLinks(ARCHITECTURE), ...brokenLinks(DECISIONS)], []);
});

Deno.test("docs/decisions.md: every path it names exists", () => {
  assertEquals(missingPaths(decisions), []);
});

Deno.test("links into ARCHITECTURE.md and docs/decisions.md resolve", () => {
  const pages = [
    "README.md",
    ...[...TREE].filter((p) => /^docs\/[^/]+\.md$/.test(p)),
  ];
  const broken = pages.flatMap((p) =>
    brokenLinks(p, [ARCHITECTURE, DECISIONS])
  );
  assertEquals(broken, []);
});

Deno.test("the checks catch what they are for", () => {
  const wrong = [
    "- **`lib/trace/`** (`./trace`): `make_event.ts`, `no_such_file.ts`.",
    "- **`lib/no_such_folder/`** (no export): `x.ts`.",
    "- **`lib/store/`** (`./trace`): the store.",
    "See `lib/nowhere/`, `docs/gone.md`, `application/json`, `/hook/host_a`.",
    "- **`./store`** (34) exports",
  ].join("\n");
  assertEquals(missingPaths(wrong), [
    "1: no_such_file.ts",
    "2: lib/no_such_folder/",
    "2: x.ts",
    "4: lib/nowhere/",
    "4: docs/gone.md",
  ]);
  assertEquals(exportProblems(wrong), [
    "3: lib/store/ names [./trace], deno.json exports [./store]",
  ]);
  assertEquals(writtenCounts(wrong), ["5: - **`./store`** (34) exports"]);
  assertEquals(
    layersLine("## Layers\n\n`trace` → `store`\n\n## Next\n"),
    ["trace", "store"],
  );
});
