/**
 * Check the port against recorded τ²-bench retail conversations: replay
 * each successful simulation's tool calls on a fresh environment, compare
 * every result with the recorded tool message, and judge the final
 * database by the task's ground-truth actions.
 *
 * @module
 */
import { firstDifference } from "./retail_db.ts";
import { RetailEnv } from "./retail_env.ts";
import { type RetailAction, taskSolved } from "./retail_success.ts";

/** A recorded τ² message (the fields the check reads). */
export interface Tau2Message {
  /** `assistant`, `user` or `tool`. */
  role: string;
  /** Tool message: the id of the call it answers. */
  id?: string;
  /** Text (a tool message's result). */
  content?: string | null;
  /** Tool calls of an assistant message (arguments an object or JSON text). */
  tool_calls?:
    | {
      id: string;
      name: string;
      arguments: Record<string, unknown> | string;
    }[]
    | null;
}

/** A recorded τ² simulation. */
export interface Tau2Simulation {
  /** The task id the file gives. */
  task_id: string;
  /** τ²'s verdict (`reward` 1 for success). */
  reward_info?: { reward?: number } | null;
  /** The conversation. */
  messages: Tau2Message[];
}

/** A τ² task spec (the fields the check reads). */
export interface Tau2Task {
  /** Tool message: the id of the call it answers. */
  id: string;
  /** Ground truth: `actions` are the expected tool calls. */
  evaluation_criteria?: { actions?: RetailAction[] | null } | null;
}

/** A call whose result differs from the recorded one. */
export interface ReplayMismatch {
  /** Simulation index in the file. */
  simulation: number;
  /** Index of the assistant message holding the call. */
  message_index: number;
  /** Tool name. */
  tool: string;
  /** The recorded content (null when no tool message answers the call). */
  recorded: string | null;
  /** Our content. */
  ours: string;
}

/** What the replay found. */
export interface ReplayReport {
  /** Successful simulations replayed. */
  episodes: number;
  /** Tool calls replayed. */
  calls: number;
  /** Calls whose content equals the recorded one. */
  reproduced_calls: number;
  /** Episodes whose final database satisfies their task. */
  solved: number;
  /** The first 50 differing calls. */
  mismatches: ReplayMismatch[];
  /** Episodes not solved, with the first differing path. */
  unsolved: { simulation: number; task_id: string; diff?: string }[];
}

const MAX_MISMATCHES = 50;

/** JSON value of a text, or the text itself when it is not JSON. */
function parsed(text: string): { json: boolean; value: unknown } {
  try {
    return { json: true, value: JSON.parse(text) };
  } catch {
    return { json: false, value: text };
  }
}

/** Whether two contents agree (as JSON when both are JSON, else exactly). */
export function sameContent(recorded: string, ours: string): boolean {
  const a = parsed(recorded);
  const b = parsed(ours);
  if (a.json && b.json) return firstDifference(a.value, b.value) === null;
  return recorded === ours;
}

/** What {@linkcode replayCheck} replays the file against. */
export interface ReplayAgainst {
  /** Which task each simulation really ran (`matched_task_id` by simulation `index`), or null to use each simulation's `task_id`. */
  match: {
    simulations: { index: number; matched_task_id: string | null }[];
  } | null;
  /** The initial retail database. */
  db: unknown;
}

/**
 * Replay the successful simulations of a τ² retail results file.
 *
 * @param file The results file: `simulations` and `tasks`.
 * @param against The task-match file (or null) and the initial database.
 * @returns Counts, the first 50 mismatches and the unsolved episodes.
 * @throws {TypeError} When `db` is not a retail database.
 */
export function replayCheck(
  file: { simulations: Tau2Simulation[]; tasks: Tau2Task[] },
  against: ReplayAgainst,
): ReplayReport {
  const { match, db } = against;
  const tasks = new Map(file.tasks.map((t) => [String(t.id), t]));
  const matched = new Map(
    (match?.simulations ?? []).map((m) => [m.index, m.matched_task_id]),
  );
  const report: ReplayReport = {
    episodes: 0,
    calls: 0,
    reproduced_calls: 0,
    solved: 0,
    mismatches: [],
    unsolved: [],
  };
  file.simulations.forEach((sim, index) => {
    if (sim.reward_info?.reward !== 1) return;
    const taskId = match ? matched.get(index) : sim.task_id;
    const task = taskId == null ? undefined : tasks.get(String(taskId));
    if (!task) return;
    report.episodes++;
    const env = new RetailEnv(db);
    const answers = new Map<string, string>();
    for (const m of sim.messages) {
      if (m.role === "tool" && m.id) answers.set(m.id, m.content ?? "");
    }
    sim.messages.forEach((m, messageIndex) => {
      if (m.role !== "assistant" || !m.tool_calls) return;
      for (const call of m.tool_calls) {
        const args = typeof call.arguments === "string"
          ? JSON.parse(call.arguments)
          : call.arguments ?? {};
        const ours = env.respond(call.name, args);
        const recorded = answers.get(call.id) ?? null;
        report.calls++;
        if (recorded !== null && sameContent(recorded, ours)) {
          report.reproduced_calls++;
        } else if (report.mismatches.length < MAX_MISMATCHES) {
          report.mismatches.push({
            simulation: index,
            message_index: messageIndex,
            tool: call.name,
            recorded,
            ours,
          });
        }
      }
    });
    const verdict = taskSolved({
      initialDb: db,
      finalDb: env.db,
      actions: task.evaluation_criteria?.actions ?? [],
    });
    if (verdict.solved) report.solved++;
    else {
      report.unsolved.push({
        simulation: index,
        task_id: String(task.id),
        diff: verdict.diff,
      });
    }
  });
  return report;
}
