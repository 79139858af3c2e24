/**
 * Tool parameters: what a capability declares, or what can be read from a
 * function's source without guessing. {@linkcode readParameters} gives the
 * names of plain positional parameters (defaults allowed, even with calls
 * in them), and null for anything it cannot read for certain: a
 * destructured or rest parameter, a bound or native function, a count that
 * disagrees with `fn.length`. {@linkcode declareTool} lets a capability say
 * its parameters (names in order, or `"object"`: it takes one arguments
 * object).
 *
 * @module
 */

/** Parameters a tool takes: names in order, or one arguments object. */
export type ToolParams = readonly string[] | "object";

/** A function with its parameters declared. */
export interface DeclaredTool<F = (...args: never[]) => unknown> {
  /** The function. */
  call: F;
  /** Its parameters. */
  params: ToolParams;
}

/**
 * Declare a tool's parameters.
 *
 * @param call The function.
 * @param params Names in order, or `"object"`.
 * @returns The declared tool.
 *
 * @example
 * ```ts
 * import { declareTool } from "./parameters.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * const t = declareTool((id: string, reason: string) => `${id}:${reason}`, ["order_id", "reason"]);
 * deepStrictEqual(t.params, ["order_id", "reason"]);
 * ```
 */
export function declareTool<F extends (...args: never[]) => unknown>(
  call: F,
  params: ToolParams,
): DeclaredTool<F> {
  return { call, params };
}

/** A tool call whose arguments cannot be bound without guessing. */
export class ToolBindingError extends TypeError {
  /**
   * Create a `ToolBindingError`.
   *
   * @param tool Tool name.
   * @param why What is unclear.
   */
  constructor(tool: string, why: string) {
    super(
      `Cannot bind the arguments of ${tool}: ${why}; declare its parameters with declareTool(fn, ["a", "b"]) or declareTool(fn, "object")`,
    );
    this.name = "ToolBindingError";
  }
}

/** The text between the parameter list's parentheses, or null. */
function parameterText(src: string): string | null {
  let s = src.trimStart().replace(/^async\b\s*/, "");
  if (/^[A-Za-z_$][\w$]*\s*=>/.test(s)) {
    return s.slice(0, s.indexOf("=")).trim();
  }
  s = s.replace(/^function\b\s*\*?\s*[\w$]*\s*/, "")
    .replace(/^(?:get|set|static)\s+/, "")
    .replace(/^\*?\s*(?:[\w$]+|\[[^\]]*\]|"[^"]*"|'[^']*')\s*(?=\()/, "");
  if (!s.startsWith("(")) return null;
  for (const [i, c, depth] of unquoted(s)) {
    if (depth === 0 && (c === ")" || c === "]" || c === "}")) {
      return s.slice(1, i);
    }
  }
  return null;
}

/**
 * The characters of source text outside string quotes, each with the
 * bracket depth after it (one scanner for both uses below).
 */
function* unquoted(text: string): Generator<[number, string, number]> {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      quote = c;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    yield [i, c, depth];
  }
}

/** Split a parameter list on its top-level commas. */
function topLevel(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const [i, c, depth] of unquoted(text)) {
    if (c === "," && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((p) => p.replace(/\/\*[\s\S]*?\*\//g, "").trim()).filter((
    p,
  ) => p !== "");
}

/**
 * The names of a function's parameters when they can be read for certain.
 *
 * @param fn A function.
 * @returns Names in order, `[]` for none, or null when unsure.
 *
 * @example
 * ```ts
 * import { readParameters } from "./parameters.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * deepStrictEqual(readParameters((order_id: string, n = Math.max(1, 2)) => 0), ["order_id", "n"]);
 * deepStrictEqual(readParameters(({ id }: { id: string }) => id), null);
 * deepStrictEqual(readParameters(((a: number) => a).bind(null)), null);
 * ```
 */
export function readParameters(
  // deno-lint-ignore no-explicit-any
  fn: (...args: any[]) => any,
): string[] | null {
  const src = Function.prototype.toString.call(fn);
  if (/\{\s*\[native code\]\s*\}\s*$/.test(src)) return null;
  const text = parameterText(src);
  if (text === null) return null;
  const names: string[] = [];
  for (const p of topLevel(text)) {
    const name = p.split("=")[0].replace(/:[\s\S]*$/, "").trim();
    if (!/^[A-Za-z_$][\w$]*$/.test(name)) return null; // destructured or rest
    names.push(name);
  }
  // Parameters before the first default count in fn.length.
  const required = topLevel(text).findIndex((p) => p.includes("="));
  const expected = required === -1 ? names.length : required;
  return expected === fn.length ? names : null;
}
