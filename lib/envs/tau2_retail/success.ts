/**
 * τ²'s database rule for a retail task: replay the task's ground-truth
 * actions on a fresh copy of the initial database (an action that fails
 * is ignored, as τ²'s evaluator does) and compare the result with the
 * database the run ended with. τ² compares hashes of the sorted-key JSON
 * dumps; here the comparison is canonical deep equality, which also names
 * the first differing path.
 *
 * @module
 */
import { firstDifference, normalizeRetailDb } from "./db.ts";
import { RetailEnv } from "./tools.ts";

/** A ground-truth action of a task (`evaluation_criteria.actions[k]`). */
export interface RetailAction {
  /** The tool. */
  name: string;
  /** Its arguments. */
  arguments?: Record<string, unknown>;
}

/** The verdict of {@link taskSolved}. */
export interface TaskSolvedResult {
  /** Whether the final database equals the expected one. */
  solved: boolean;
  /** The first differing path (`db.orders["#W1"].status: … vs …`; expected first). */
  diff?: string;
}

/**
 * Whether a run solved a task by τ²'s database rule.
 *
 * @param initialDb The database the run started from (parsed `db.json`).
 * @param finalDb The database the run ended with (e.g. `env.db`).
 * @param actions The task's ground-truth actions.
 * @returns `{solved, diff?}`.
 * @throws {TypeError} A database has the wrong shape.
 */
export function taskSolved(
  initialDb: unknown,
  finalDb: unknown,
  actions: readonly RetailAction[],
): TaskSolvedResult {
  const gold = new RetailEnv(initialDb);
  for (const a of actions) {
    const tool = gold.tools[a.name];
    if (!tool) continue; // τ²: an unknown tool raises, and the error is ignored
    try {
      tool(a.arguments ?? {});
    } catch {
      // τ² logs a failing ground-truth action and goes on
    }
  }
  const diff = firstDifference(gold.db, normalizeRetailDb(finalDb));
  return diff === null ? { solved: true } : { solved: false, diff };
}
