/**
 * Lineage paths: where a value sits in the state before a step.
 *
 * Grammar: a top-level key, then `.key` for object members and `[i]` for
 * list items (`[$var]` when the index equals the integer state variable
 * `var`); `~json` descends into a string that holds JSON; `~token[i]` is
 * the i-th token of a string, `~word[i]` its i-th word (see `meaningful.ts`),
 * `~span[s:e]` the characters from s to e (a part of a hyphen- or
 * underscore-joined token, such as `ORD-7731` in `shipped-ORD-7731.txt`). Keys that are not
 * plain identifiers are written `["key"]`.
 *
 * @module
 */
import { tokenize, words } from "./meaningful.ts";

/** One step of a path. */
export type PathSegment =
  | { key: string }
  | { index: number }
  | { variable: string }
  | { json: true }
  | { token: number }
  | { word: number }
  | { span: [number, number] };

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/**
 * Write a path from segments.
 *
 * @param segments Segments, the first a key.
 * @returns The path text.
 */
export function formatPath(segments: PathSegment[]): string {
  let out = "";
  for (const s of segments) {
    if ("key" in s) {
      out += PLAIN_KEY.test(s.key)
        ? (out === "" ? s.key : `.${s.key}`)
        : `[${JSON.stringify(s.key)}]`;
    } else if ("index" in s) out += `[${s.index}]`;
    else if ("variable" in s) out += `[$${s.variable}]`;
    else if ("json" in s) out += "~json";
    else if ("token" in s) out += `~token[${s.token}]`;
    else if ("span" in s) out += `~span[${s.span[0]}:${s.span[1]}]`;
    else out += `~word[${s.word}]`;
  }
  return out;
}

/**
 * Read a path back into segments.
 *
 * @param path Path text.
 * @returns Segments.
 * @throws {SyntaxError} For a malformed path.
 */
export function parsePath(path: string): PathSegment[] {
  const out: PathSegment[] = [];
  let i = 0;
  const fail = () => {
    throw new SyntaxError(
      `Malformed lineage path ${JSON.stringify(path)} at ${i}`,
    );
  };
  while (i < path.length) {
    const c = path[i];
    if (path.startsWith("~json", i)) {
      out.push({ json: true });
      i += 5;
    } else if (path.startsWith("~token[", i)) {
      const end = path.indexOf("]", i);
      if (end < 0) fail();
      out.push({ token: Number(path.slice(i + 7, end)) });
      i = end + 1;
    } else if (path.startsWith("~span[", i)) {
      const end = path.indexOf("]", i);
      if (end < 0) fail();
      const m = /^(\d+):(\d+)$/.exec(path.slice(i + 6, end));
      if (!m) fail();
      out.push({ span: [Number(m![1]), Number(m![2])] });
      i = end + 1;
    } else if (path.startsWith("~word[", i)) {
      const end = path.indexOf("]", i);
      if (end < 0) fail();
      out.push({ word: Number(path.slice(i + 6, end)) });
      i = end + 1;
    } else if (c === "[") {
      if (path[i + 1] === '"') {
        // A quoted key: find the closing quote honoring escapes.
        let j = i + 2;
        while (j < path.length && path[j] !== '"') {
          j += path[j] === "\\" ? 2 : 1;
        }
        out.push({ key: JSON.parse(path.slice(i + 1, j + 1)) });
        i = j + 2;
      } else {
        const end = path.indexOf("]", i);
        if (end < 0) fail();
        const inner = path.slice(i + 1, end);
        if (inner.startsWith("$")) out.push({ variable: inner.slice(1) });
        else if (/^\d+$/.test(inner)) out.push({ index: Number(inner) });
        else fail();
        i = end + 1;
      }
    } else {
      if (c === ".") i++;
      else if (out.length > 0) fail();
      const m = /^[A-Za-z_$][A-Za-z0-9_$-]*/.exec(path.slice(i));
      if (!m) fail();
      out.push({ key: m![0] });
      i += m![0].length;
    }
  }
  return out;
}

/**
 * The value a path points at, or undefined.
 *
 * @param state The state (top-level keys are stores and variables).
 * @param path A path.
 * @returns The value.
 */
export function resolvePath(
  state: Record<string, unknown>,
  path: string,
): unknown {
  let cur: unknown = state;
  for (const s of parsePath(path)) {
    if (cur === undefined || cur === null) return undefined;
    if ("key" in s) {
      if (typeof cur !== "object" || Array.isArray(cur)) return undefined;
      cur = (cur as Record<string, unknown>)[s.key];
    } else if ("index" in s || "variable" in s) {
      if (!Array.isArray(cur)) return undefined;
      const idx = "index" in s ? s.index : state[s.variable];
      if (typeof idx !== "number") return undefined;
      cur = cur[idx];
    } else if ("json" in s) {
      if (typeof cur !== "string") return undefined;
      try {
        cur = JSON.parse(cur);
      } catch {
        return undefined;
      }
    } else if ("token" in s) {
      if (typeof cur !== "string") return undefined;
      cur = tokenize(cur)[s.token]?.text;
    } else if ("span" in s) {
      if (typeof cur !== "string" || s.span[1] > cur.length) return undefined;
      cur = cur.slice(s.span[0], s.span[1]);
    } else {
      if (typeof cur !== "string") return undefined;
      cur = words(cur)[s.word]?.text;
    }
  }
  return cur;
}
