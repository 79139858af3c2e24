/**
 * Lineage of one argument value against the state before its step:
 * a whole-value source path, or a template with `$ref(path)` markers for
 * the values embedded in a string.
 *
 * The session's working directory (`input.cwd`) is a source like the
 * user's words, ranked before tool results for path-shaped values: a value
 * that is the working directory, lies under it or names it inside a
 * command is attributed to `input.cwd` (what the user wrote still comes
 * first), never to the pieces of the path that an earlier tool's output
 * happens to repeat.
 *
 * @module
 */
import { comparePaths } from "./find_source.ts";
import {
  isIdentifierToken,
  isMeaningful,
  isTextDatum,
  subTokens,
  tokenize,
  words,
} from "./meaningful.ts";
import { refMarker } from "./records.ts";
import type { StateIndex } from "./state_index.ts";

/** Source path of the working directory in the state. */
export const CWD_PATH = "input.cwd";

/** A character that can continue a path name (so not a boundary). */
const NAME_CHAR = /[A-Za-z0-9_.~-]/;

/**
 * The episode's working directory from the state (`input.cwd`), without a
 * trailing slash; null when absent or the root.
 *
 * @param state The state before a step.
 * @returns The directory, or null.
 */
export function workingDirectory(
  state: Record<string, unknown>,
): string | null {
  const input = state.input;
  if (typeof input !== "object" || input === null) return null;
  const cwd = (input as { cwd?: unknown }).cwd;
  if (typeof cwd !== "string") return null;
  const dir = cwd.length > 1 ? cwd.replace(/\/+$/, "") : cwd;
  return dir.length >= 2 && dir.startsWith("/") ? dir : null;
}

/**
 * Where a directory occurs in a string as a whole path: not preceded by a
 * name character or `/`, and followed by the end, a `/` or a character
 * that cannot continue a name (`/w/basic` is not in `/w/basic2/x`).
 *
 * @param value The string.
 * @param dir The directory.
 * @returns Start offsets, in order, not overlapping.
 */
export function directoryOccurrences(value: string, dir: string): number[] {
  const out: number[] = [];
  let from = 0;
  for (;;) {
    const at = value.indexOf(dir, from);
    if (at < 0) return out;
    const before = at > 0 ? value[at - 1] : "";
    const after = value[at + dir.length] ?? "";
    const startsPath = before === "" ||
      (before !== "/" && !NAME_CHAR.test(before));
    const endsName = after === "" || after === "/" || !NAME_CHAR.test(after);
    if (startsPath && endsName) {
      out.push(at);
      from = at + dir.length;
    } else from = at + 1;
  }
}

/**
 * Template of the identifier spans of a string found in the state.
 *
 * @param text The string (or a piece of one).
 * @param whole The whole argument value (its own exact match is not a span).
 * @param index The state index.
 * @returns The text with attributed spans as `$ref(path)`, or null.
 */
function spanTemplate(
  text: string,
  whole: string,
  index: StateIndex,
): string | null {
  // Candidate spans: words, tokens and parts of joined tokens, longer
  // first where they overlap.
  const spans = [...words(text), ...tokenize(text), ...subTokens(text)]
    .filter((t) => t.text !== whole && isIdentifierToken(t.text))
    .sort((a, b) => a.start - b.start || b.text.length - a.text.length);
  let out = "";
  let at = 0;
  for (const span of spans) {
    if (span.start < at) continue; // overlaps a span already attributed
    // A number written in text matches the number too.
    const asNumber = /^-?\d+(\.\d+)?$/.test(span.text)
      ? Number(span.text)
      : null;
    const found = asNumber !== null && isMeaningful(asNumber)
      ? [...index.lookup(span.text), ...index.lookup(asNumber)].sort(
        comparePaths,
      )
      : index.lookup(span.text);
    const best = found[0];
    if (!best) continue;
    out += text.slice(at, span.start) + refMarker(best);
    at = span.start + span.text.length;
  }
  return at > 0 ? out + text.slice(at) : null;
}

/**
 * Lineage of a string that names the working directory: a whole-value
 * source in the task input first, else `input.cwd` itself, else a template
 * with `$ref(input.cwd)` in each place and the rest attributed as usual.
 */
function pathLineage(
  value: string,
  dir: string,
  at: number[],
  index: StateIndex,
): string {
  const fromInput = isMeaningful(value)
    ? index.lookup(value).find((p) => p.startsWith("input."))
    : undefined;
  if (fromInput) return fromInput;
  if (value === dir) return CWD_PATH;
  let out = "";
  let from = 0;
  for (const start of [...at, value.length]) {
    const piece = value.slice(from, start);
    out += piece ? spanTemplate(piece, value, index) ?? piece : "";
    if (start < value.length) out += refMarker(CWD_PATH);
    from = start + dir.length;
  }
  return out;
}

/**
 * Lineage of one argument value: a source path, a template with
 * `$ref(path)` markers, or null.
 *
 * @param value The argument value.
 * @param index The state index before the step.
 * @returns The lineage.
 *
 * @example
 * ```ts
 * import { StateIndex } from "./state_index.ts";
 * import { argLineage } from "./arg_lineage.ts";
 * import { strictEqual } from "node:assert/strict";
 * const index = new StateIndex();
 * index.add("input", { cwd: "/home/dev/agent-demo" });
 * index.add("read_0", "<path>/home/dev/agent-demo/a.txt</path>");
 * strictEqual(
 *   argLineage("cat /home/dev/agent-demo/a.txt", index),
 *   "cat $ref(input.cwd)/a.txt",
 * );
 * ```
 */
export function argLineage(value: unknown, index: StateIndex): string | null {
  if (typeof value === "string") {
    const dir = workingDirectory(index.state);
    const at = dir === null ? [] : directoryOccurrences(value, dir);
    if (dir !== null && at.length) return pathLineage(value, dir, at, index);
  }
  if (isMeaningful(value)) {
    const best = index.lookup(value)[0];
    if (best) return best;
  }
  // A number of three digits or more comes from text that wrote it.
  if (
    typeof value === "number" && Number.isInteger(value) &&
    isTextDatum(String(value))
  ) {
    const inText = index.lookup(String(value)).filter((p) =>
      /~(word|token|span)\[/.test(p)
    );
    if (inText[0]) return inText[0];
  }
  if (typeof value !== "string") return null;
  return spanTemplate(value, value, index);
}
