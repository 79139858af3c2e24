/**
 * Capabilities for running a package against the τ²-bench retail domain:
 * the real retail tools over a fresh copy of a database, their schemas,
 * the retail policy, and the verdict of τ²'s database rule for a task.
 * `compile.ts run PKG --capabilities examples/tau2_retail/capabilities.ts
 * -- [--db FILE] [--task ID [--tasks FILE]]` loads it.
 *
 * - `--db FILE`: the retail `db.json` (default: the vendored slice
 *   `fixtures/tau2_retail_db_slice.json`).
 * - `--task ID`: judge the run by this task's ground-truth actions.
 * - `--tasks FILE`: where the task is (a `tasks.json` list, or a results
 *   file with `tasks`); default `tasks.json` beside the db when there.
 * - The instructions are `policy.md` beside the db when there.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DeclaredTool,
  declareTool,
} from "../../lib/gateway/parameters.ts";
import type { ChatTool } from "../../lib/models/chat_types.ts";
import {
  RETAIL_TOOL_SCHEMAS,
  type RetailAction,
  RetailEnv,
  type RetailTool,
  taskSolved,
} from "../../lib/envs/tau2_retail/mod.ts";

/** The verdict on a run with a task. */
export interface RetailOutcome {
  /** Whether the task was solved (τ²'s database rule). */
  success: boolean;
  /** The same: solved by the database rule. */
  solved_by_db_rule: boolean;
  /** The first differing path when not solved (expected first). */
  diff?: string;
}

/** What {@link createCapabilities} returns. */
export interface RetailCapabilities {
  /** The retail tools, each taking one arguments object. */
  tools: Record<string, DeclaredTool<RetailTool>>;
  /** The tools as the model sees them. */
  schemas: ChatTool[];
  /** The retail policy, or a one-line instruction when none is beside the db. */
  instructions: string;
  /** The verdict for the task, or null when no task was given. */
  outcome: () => RetailOutcome | null;
  /** The environment (for inspection). */
  env: RetailEnv;
}

const DEFAULT_DB = fileURLToPath(
  new URL("../../fixtures/tau2_retail_db_slice.json", import.meta.url),
);

const ONE_LINE =
  "You are a retail customer service agent: authenticate the user, then help with their orders, returns, exchanges and address using the tools, confirming every change with the user first.";

function readIfThere(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

function findTask(path: string, id: string): RetailAction[] {
  const data = JSON.parse(Deno.readTextFileSync(path));
  const tasks = Array.isArray(data) ? data : data?.tasks;
  if (!Array.isArray(tasks)) {
    throw new TypeError(
      `${path} holds no tasks: give a τ² tasks.json (a list) or a results file with "tasks"`,
    );
  }
  const task = tasks.find((t) => String(t?.id) === id);
  if (!task) {
    throw new RangeError(
      `No task "${id}" in ${path}: give a task id from that file`,
    );
  }
  return task.evaluation_criteria?.actions ?? [];
}

/**
 * A fresh retail environment for one run.
 *
 * @param options `args`: the words after `--` (`--db`, `--task`, `--tasks`); `episode` is not used.
 * @returns Tools, schemas, instructions and the outcome judge.
 * @throws {TypeError} `--task` without a tasks file, or a file without tasks.
 * @throws {RangeError} The task id is not in the tasks file.
 */
export function createCapabilities(
  options: { episode?: number; args?: string[] } = {},
): RetailCapabilities {
  const { values } = parseArgs({
    args: options.args ?? [],
    options: {
      db: { type: "string" },
      task: { type: "string" },
      tasks: { type: "string" },
    },
  });
  const dbPath = values.db ?? DEFAULT_DB;
  const initialDb = JSON.parse(Deno.readTextFileSync(dbPath));
  const env = new RetailEnv(initialDb);
  let actions: RetailAction[] | null = null;
  if (values.task !== undefined) {
    const beside = join(dirname(dbPath), "tasks.json");
    const tasksPath = values.tasks ??
      (readIfThere(beside) !== null ? beside : undefined);
    if (!tasksPath) {
      throw new TypeError(
        `--task ${values.task} needs --tasks FILE (no tasks.json beside ${dbPath})`,
      );
    }
    actions = findTask(tasksPath, values.task);
  }
  const tools: Record<string, DeclaredTool<RetailTool>> = {};
  for (const [name, tool] of Object.entries(env.tools)) {
    tools[name] = declareTool(tool, "object");
  }
  return {
    tools,
    schemas: [...RETAIL_TOOL_SCHEMAS],
    instructions: readIfThere(join(dirname(dbPath), "policy.md")) ?? ONE_LINE,
    outcome: () => {
      if (actions === null) return null;
      const v = taskSolved(initialDb, env.db, actions);
      return {
        success: v.solved,
        solved_by_db_rule: v.solved,
        ...(v.diff ? { diff: v.diff } : {}),
      };
    },
    env,
  };
}
