/**
 * A package that would do nothing: its IR makes no tool call and fills no
 * leaf itself (a tree's `sequence of 0`, an agent form with no lookup and
 * no choice: the model alone, as without a package). Compile refuses to
 * write one and run refuses to run one, with the reason
 * ({@linkcode EmptyPackageError}); replaying it "clean" proves nothing.
 *
 * @module
 */
import type { BehaviorIr } from "./ir.ts";

/** Node kinds that do something of the package's own when it runs. */
const WORKING_KINDS: ReadonlySet<string> = new Set([
  "action",
  "predict",
  "react",
  "lookup",
  "choice",
]);

/**
 * Whether an IR does nothing of its own: no action, residual leaf, lookup
 * or choice (a bare `agent` node leaves everything to the model).
 *
 * @param ir The IR.
 * @returns True when running it would call nothing.
 */
export function isEmptyIr(ir: BehaviorIr): boolean {
  return !Object.values(ir.nodes).some((n) => WORKING_KINDS.has(n.kind));
}

/** A package that would do nothing, refused; the message says why and what to do. */
export class EmptyPackageError extends Error {
  /**
   * Create an `EmptyPackageError`.
   *
   * @param message Why there is nothing to run and what would give a package.
   */
  constructor(message: string) {
    super(message);
    this.name = "EmptyPackageError";
  }
}
