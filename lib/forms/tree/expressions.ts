/**
 * Evaluation of IR expressions against a blackboard (stores, variables and
 * `input`), shared by the verifier's replay and the runtime.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import { resolvePath } from "../../lineage/paths.ts";
import type { ArgExpr } from "./tree_nodes.ts";

/** A ref that does not resolve on this instance. */
export class UnresolvedRefError extends Error {
  /** The path. */
  readonly path: string;
  /**
   * Create a `UnresolvedRefError`.
   *
   * @param path The path.
   */
  constructor(path: string) {
    super(`Ref ${path} does not resolve on this instance`);
    this.name = "UnresolvedRefError";
    this.path = path;
  }
}

/**
 * Resolve a ref path on the blackboard.
 *
 * @param board Blackboard.
 * @param path Path.
 * @returns The value.
 * @throws {UnresolvedRefError} When nothing is there.
 */
export function resolveRef(
  board: Record<string, unknown>,
  path: string,
): unknown {
  const v = resolvePath(board, path);
  if (v === undefined) throw new UnresolvedRefError(path);
  return v;
}

/**
 * Resolve a ref, or undefined when it does not resolve (for branches, whose
 * `otherwise` handles a missing value).
 *
 * @param board Blackboard.
 * @param path Path.
 * @returns The value or undefined.
 */
export function tryResolve(
  board: Record<string, unknown>,
  path: string,
): unknown {
  try {
    return resolveRef(board, path);
  } catch {
    return undefined;
  }
}

/**
 * The value of an argument expression.
 *
 * @param expr The expression.
 * @param board Blackboard.
 * @returns The value.
 * @throws {UnresolvedRefError} When a ref does not resolve.
 */
export function evalArg(
  expr: ArgExpr,
  board: Record<string, unknown>,
): unknown {
  if ("const" in expr) return structuredClone(expr.const);
  if ("ref" in expr) return structuredClone(resolveRef(board, expr.ref));
  return expr.template.replace(/\$ref\(([^)]*)\)/g, (_m, p: string) => {
    const v = resolveRef(board, p);
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

/**
 * Build the arguments object of an action (argument paths are leaf paths).
 *
 * @param args Argument path → expression.
 * @param board Blackboard.
 * @returns The arguments.
 */
export function evalArgs(
  args: Record<string, ArgExpr>,
  board: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [path, expr] of Object.entries(args)) {
    setPath(out, path, evalArg(expr, board));
  }
  return out;
}

function setPath(
  root: Record<string, unknown>,
  path: string,
  value: unknown,
): void {
  const parts = path.match(/[^.[\]]+|\[\d+\]/g) ?? [path];
  let cur: Record<string, unknown> | unknown[] = root;
  parts.forEach((p, i) => {
    const last = i === parts.length - 1;
    const isIndex = p.startsWith("[");
    const key: string | number = isIndex ? Number(p.slice(1, -1)) : p;
    const nextIsIndex = !last && parts[i + 1].startsWith("[");
    const c = cur as Record<string | number, unknown>;
    if (last) c[key] = value;
    else {
      c[key] ??= nextIsIndex ? [] : {};
      cur = c[key] as Record<string, unknown>;
    }
  });
}

/**
 * Which case of a branch applies.
 *
 * @param value The value branched on.
 * @param cases The cases.
 * @returns The target node id, or null (take `otherwise`).
 */
export function chooseCase(
  value: unknown,
  cases: { equals: unknown; then: string }[],
): string | null {
  const v = canonicalJson(value ?? null);
  return cases.find((c) => canonicalJson(c.equals) === v)?.then ?? null;
}

/**
 * The value at an argument leaf path of an arguments object.
 *
 * @param args Arguments (or undefined).
 * @param path Leaf path (`a`, `items[0].id`).
 * @returns The value, or null.
 */
export function argAt(
  args: Record<string, unknown> | undefined,
  path: string,
): unknown {
  if (!args) return null;
  if (path in args) return args[path];
  const v = resolvePath(args, path);
  return v === undefined ? null : v;
}
