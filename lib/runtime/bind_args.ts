/**
 * Calling a bound tool with an arguments object: positionally when the
 * function's parameter names cover the arguments (read from its source, as
 * the gateway does), else with the object itself.
 *
 * @module
 */
import { parameterNames } from "../gateway/tool_gateway.ts";

/**
 * Call a tool function with named arguments.
 *
 * @param fn The tool.
 * @param args Arguments by name.
 * @returns What the tool returns.
 */
export function callWithArgs(
  fn: (...a: unknown[]) => unknown,
  args: Record<string, unknown>,
): unknown {
  const names = parameterNames(fn);
  const keys = Object.keys(args);
  const positional = keys.length > 0 && keys.every((k) => names.includes(k));
  if (!positional) return fn(args);
  const last = Math.max(...keys.map((k) => names.indexOf(k)));
  return fn(...names.slice(0, last + 1).map((n) => args[n]));
}
