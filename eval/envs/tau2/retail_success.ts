/**
 * τ²'s database rule for a retail task: replay the task's ground-truth
 * actions on a fresh copy of the initial database (an action that fails
 * is skipped, as τ² logs and goes on) and compare the result with the
 * database the run left, canonically.
 *
 * @module
 */
import { firstDifference } from "./retail_db.ts";
import { RetailEnv } from "./retail_env.ts";

/** A ground-truth action of a task. */
export interface RetailAction {
  /** Tool name. */
  name: string;
  /** Arguments object. */
  arguments: Record<string, unknown>;
}

/** The verdict of the database rule. */
export interface TaskVerdict {
  /** Whether the final database equals the expected one. */
  solved: boolean;
  /** The first differing path (`$.orders["#W1"].status`) when not solved. */
  diff?: string;
}

/** The run {@linkcode taskSolved} judges. */
export interface RetailRun {
  /** The database the run started from (not mutated). */
  initialDb: unknown;
  /** The database the run left. */
  finalDb: unknown;
  /** The task's `evaluation_criteria.actions`. */
  actions: readonly RetailAction[];
}

/**
 * Whether a run solved its task by τ²'s database rule.
 *
 * @param run The initial and final databases and the actions the task expects.
 * @returns `{solved}` and, when not solved, the first differing path.
 * @throws {TypeError} When `initialDb` is not a retail database.
 *
 * @example
 * ```ts
 * import { taskSolved } from "./retail_success.ts";
 * import { strictEqual } from "node:assert/strict";
 * const db = { products: {}, users: {}, orders: {} };
 * strictEqual(taskSolved({ initialDb: db, finalDb: db, actions: [] }).solved, true);
 * ```
 */
export function taskSolved(
  run: RetailRun,
): TaskVerdict {
  const { initialDb, finalDb, actions } = run;
  const gold = new RetailEnv(initialDb);
  for (const action of actions) {
    try {
      gold.call(action.name, action.arguments ?? {});
    } catch {
      // τ² logs a failing golden action and continues with the next one.
    }
  }
  const diff = firstDifference(finalDb, gold.db);
  return diff === null ? { solved: true } : { solved: false, diff };
}
