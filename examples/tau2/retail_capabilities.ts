/**
 * Capabilities for running a τ²-bench retail package with
 * `compile.ts run PKG --capabilities examples/tau2/retail_capabilities.ts
 * [-- --db FILE] [--task ID] [--tasks FILE]`: the retail tools over a fresh
 * copy of the database, their schemas, the domain policy as instructions
 * and, with a task, the outcome by τ²'s database rule.
 *
 * `--db` defaults to the vendored cut `fixtures/tau2_retail_db.json`;
 * `--tasks` to `tasks.json` beside the db when it exists (a τ² results
 * file with a `tasks` list also works). Reads files with `--allow-read`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { dirname, join, resolve } from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type DeclaredTool,
  declareTool,
} from "../../lib/tool_gateway/parameters.ts";
import type { ChatTool } from "../../lib/models/chat_types.ts";
import {
  RETAIL_TOOL_SCHEMAS,
  RetailEnv,
  type RetailTool,
  taskSolved,
  type Tau2Task,
} from "../../eval/envs/tau2/mod.ts";

/** What {@linkcode createCapabilities} returns. */
export interface RetailCapabilities {
  /** The retail tools, each taking one arguments object. */
  tools: Record<string, DeclaredTool<RetailTool>>;
  /** The tools as the model sees them. */
  schemas: ChatTool[];
  /** The domain policy (or a one-line instruction without one). */
  instructions: string;
  /** The verdict of τ²'s database rule for the task, or null without a task. */
  outcome: () => { success: boolean; diff?: string } | null;
  /** The environment (for inspection). */
  env: RetailEnv;
  /** The task run, when `--task` was given. */
  task: Tau2Task | null;
}

const FIXTURE_DB = fileURLToPath(
  new URL("../../fixtures/tau2_retail_db.json", import.meta.url),
);

const DEFAULT_INSTRUCTIONS =
  "You are a customer service agent of a retail store: help the user with their orders, returns, exchanges and account using the tools.";

/** Tasks from a tasks file: a list, or a results file's `tasks`. */
function readTasks(path: string): Tau2Task[] {
  const data = JSON.parse(readFileSync(path, "utf8"));
  const tasks = Array.isArray(data) ? data : data?.tasks;
  if (!Array.isArray(tasks)) {
    throw new TypeError(
      `${path} holds no tasks: give a τ² tasks.json (a list) or a results file with "tasks"`,
    );
  }
  return tasks;
}

/**
 * A fresh retail environment with its tools, schemas, policy and outcome.
 *
 * @param options `args`: the words after `--` (`--db`, `--task`, `--tasks`);
 *   `episode` is accepted and unused (the database decides everything).
 * @returns Tools, schemas, instructions, outcome, the env and the task.
 * @throws {TypeError} `--task` without a tasks file, or an unknown task id.
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
  const dbPath = values.db ? resolve(values.db) : FIXTURE_DB;
  const initialDb = JSON.parse(readFileSync(dbPath, "utf8"));
  const env = new RetailEnv(initialDb);
  const beside = (name: string) => join(dirname(dbPath), name);
  let task: Tau2Task | null = null;
  if (values.task !== undefined) {
    const tasksPath = values.tasks ??
      (existsSync(beside("tasks.json")) ? beside("tasks.json") : undefined);
    if (!tasksPath) {
      throw new TypeError(
        `--task ${values.task} needs the task specs: give --tasks FILE (no tasks.json beside ${dbPath})`,
      );
    }
    task = readTasks(tasksPath).find((t) => String(t.id) === values.task) ??
      null;
    if (!task) {
      throw new TypeError(`No task "${values.task}" in ${tasksPath}`);
    }
  }
  const policy = beside("policy.md");
  const tools: Record<string, DeclaredTool<RetailTool>> = {};
  for (const [name, fn] of Object.entries(env.tools)) {
    tools[name] = declareTool(fn, "object");
  }
  const actions = task?.evaluation_criteria?.actions ?? [];
  return {
    tools,
    schemas: RETAIL_TOOL_SCHEMAS.map(({ name, description, parameters }) => ({
      name,
      description,
      parameters,
    })),
    instructions: existsSync(policy)
      ? readFileSync(policy, "utf8")
      : DEFAULT_INSTRUCTIONS,
    outcome: () => {
      if (!task) return null;
      const verdict = taskSolved({ initialDb, finalDb: env.db, actions });
      return verdict.solved
        ? { success: true }
        : { success: false, diff: verdict.diff };
    },
    env,
    task,
  };
}
