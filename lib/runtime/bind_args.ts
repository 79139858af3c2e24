/**
 * Calling a bound tool with an arguments object, without guessing: a tool
 * declared with `declareTool` is called as declared; a plain function is
 * called positionally when its parameter names can be read for certain and
 * name every argument, with the one arguments object when it takes a
 * single destructured (or unreadable) parameter, and otherwise refused with
 * a {@linkcode ToolBindingError} that says how to declare it.
 *
 * @module
 */
import {
  type DeclaredTool,
  readParameters,
  ToolBindingError,
} from "../tool_gateway/parameters.ts";

/** A tool as a registry holds it: a function, or one with declared parameters. */
export type BoundTool =
  | ((...args: never[]) => unknown)
  | DeclaredTool;

/** Whether a registry entry is a callable tool. */
export function isTool(t: unknown): t is BoundTool {
  return typeof t === "function" ||
    (typeof t === "object" && t !== null &&
      typeof (t as DeclaredTool).call === "function" &&
      ((t as DeclaredTool).params === "object" ||
        Array.isArray((t as DeclaredTool).params)));
}

function positional(
  name: string,
  fn: (...a: unknown[]) => unknown,
  params: readonly string[],
  args: Record<string, unknown>,
): unknown {
  const unknown = Object.keys(args).filter((k) => !params.includes(k));
  if (unknown.length) {
    throw new ToolBindingError(
      name,
      `it takes (${params.join(", ")}), not ${unknown.join(", ")}`,
    );
  }
  const last = Math.max(-1, ...Object.keys(args).map((k) => params.indexOf(k)));
  return fn(...params.slice(0, last + 1).map((n) => args[n]));
}

/** One call of a bound tool with named arguments. */
export interface NamedCall {
  /** Tool name (for errors). */
  name: string;
  /** The tool. */
  tool: BoundTool;
  /** Arguments by name. */
  args: Record<string, unknown>;
}

/**
 * Call a tool with named arguments.
 *
 * @param call The tool, its name and the arguments by name.
 * @returns What the tool returns.
 * @throws {ToolBindingError} When the arguments cannot be bound for certain.
 */
export function callWithArgs(call: NamedCall): unknown {
  const { name, tool, args } = call;
  if (typeof tool !== "function") {
    const fn = tool.call as (...a: unknown[]) => unknown;
    return tool.params === "object"
      ? fn(args)
      : positional(name, fn, tool.params, args);
  }
  const fn = tool as (...a: unknown[]) => unknown;
  const names = readParameters(fn);
  const keys = Object.keys(args);
  if (names === null) {
    if (fn.length <= 1) return fn(args); // one destructured or opaque parameter
    throw new ToolBindingError(
      name,
      `its ${fn.length} parameters cannot be read from its source`,
    );
  }
  if (names.length === 0) return keys.length ? fn(args) : fn();
  if (keys.every((k) => names.includes(k))) {
    return positional(name, fn, names, args);
  }
  throw new ToolBindingError(
    name,
    `its parameters (${names.join(", ")}) do not name the arguments ${
      keys.join(", ")
    }`,
  );
}
