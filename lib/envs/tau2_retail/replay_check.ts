/**
 * How faithful the port is: replay the recorded tool calls of τ²-bench
 * retail simulations on a fresh {@link RetailEnv} each, compare every
 * result with the recorded tool message, and check the task is solved by
 * τ²'s database rule at the end.
 *
 * @module
 */
import { firstDifference } from "./db.ts";
import { type RetailAction, taskSolved } from "./success.ts";
import { RetailEnv } from "./tools.ts";

/** A recorded call whose result differs from ours. */
export interface ReplayMismatch {
  /** Index of the simulation in the file. */
  simulation: number;
  /** Index of the recorded tool message in the simulation's messages. */
  message_index: number;
  /** The tool. */
  tool: string;
  /** The recorded content. */
  recorded: string;
  /** Ours. */
  ours: string;
}

/** A replayed episode that does not solve its task. */
export interface ReplayUnsolved {
  /** Index of the simulation. */
  simulation: number;
  /** The task it ran. */
  task_id: string;
  /** The first differing path (expected first). */
  diff: string;
}

/** What {@link replayCheck} found. */
export interface ReplayCheckReport {
  /** Successful (reward 1) simulations with a matched task, replayed. */
  episodes: number;
  /** Their recorded tool calls. */
  calls: number;
  /** Calls whose result equals the recorded one. */
  reproduced_calls: number;
  /** Episodes whose final database solves their task. */
  solved: number;
  /** Calls that differ (at most `maxMismatches`). */
  mismatches: ReplayMismatch[];
  /** Episodes that do not solve their task (at most `maxMismatches`). */
  unsolved: ReplayUnsolved[];
}

/** Options of {@link replayCheck}. */
export interface ReplayCheckOptions {
  /**
   * Task specs by which to judge (`tasks.json`); default: the `tasks` of
   * the simulations file, the versions the run was scored against.
   */
  tasks?: unknown[];
  /** Most mismatches (and unsolved episodes) to list. @default 50 */
  maxMismatches?: number;
}

type Obj = Record<string, unknown>;

function parsed(v: unknown): unknown {
  return typeof v === "string" ? JSON.parse(v) : v;
}

function asJson(text: string): { json: unknown } | null {
  try {
    return { json: JSON.parse(text) };
  } catch {
    return null;
  }
}

/**
 * Whether two tool message contents agree: as JSON values when each is
 * JSON text (τ²'s own replay rule), else as exact strings.
 *
 * @param recorded The recorded content.
 * @param ours Ours.
 * @returns Whether they agree.
 */
export function sameContent(recorded: string, ours: string): boolean {
  const a = asJson(recorded);
  const b = asJson(ours);
  if (a && b) return firstDifference(a.json, b.json) === null;
  return recorded === ours;
}

function taskActions(tasks: unknown[]): Map<string, RetailAction[]> {
  const out = new Map<string, RetailAction[]>();
  for (const t of tasks as Obj[]) {
    const criteria = (t.evaluation_criteria ?? {}) as Obj;
    out.set(String(t.id), (criteria.actions ?? []) as RetailAction[]);
  }
  return out;
}

/**
 * Replay the successful simulations of a τ² retail results file.
 *
 * @param simulationsJson The results file (`{tasks, simulations}`), parsed or as text.
 * @param matchJson The task match file (`{simulations: [{index, matched_task_id}]}`), parsed or as text.
 * @param db The initial database (parsed `db.json`).
 * @param options Task specs to judge by, mismatch cap.
 * @returns Counts, mismatches and unsolved episodes.
 * @throws {TypeError} A file has the wrong shape.
 */
export function replayCheck(
  simulationsJson: unknown,
  matchJson: unknown,
  db: unknown,
  options: ReplayCheckOptions = {},
): ReplayCheckReport {
  const file = parsed(simulationsJson) as Obj;
  const match = parsed(matchJson) as Obj;
  if (!Array.isArray(file?.simulations) || !Array.isArray(match?.simulations)) {
    throw new TypeError(
      "replayCheck needs a results file with simulations[] and a match file with simulations[]",
    );
  }
  const actions = taskActions(options.tasks ?? (file.tasks as unknown[]) ?? []);
  const matched = new Map<number, string>();
  for (const m of match.simulations as Obj[]) {
    if (m.matched_task_id != null) {
      matched.set(Number(m.index), String(m.matched_task_id));
    }
  }
  const cap = options.maxMismatches ?? 50;
  const report: ReplayCheckReport = {
    episodes: 0,
    calls: 0,
    reproduced_calls: 0,
    solved: 0,
    mismatches: [],
    unsolved: [],
  };
  (file.simulations as Obj[]).forEach((sim, index) => {
    const reward = (sim.reward_info as Obj | undefined)?.reward;
    const taskId = matched.get(index);
    if (reward !== 1 || taskId === undefined || !actions.has(taskId)) return;
    report.episodes++;
    const env = new RetailEnv(db);
    const messages = sim.messages as Obj[];
    const toolMessages = new Map<string, number>();
    messages.forEach((m, i) => {
      if (m.role === "tool") toolMessages.set(String(m.id), i);
    });
    for (const m of messages) {
      if (m.role !== "assistant" || !Array.isArray(m.tool_calls)) continue;
      for (const call of m.tool_calls as Obj[]) {
        const at = toolMessages.get(String(call.id));
        if (at === undefined) continue;
        const name = String(call.name);
        const args = (parsed(call.arguments) ?? {}) as Obj;
        const ours = env.invoke(name, args).content;
        const recorded = String(messages[at].content ?? "");
        report.calls++;
        if (sameContent(recorded, ours)) report.reproduced_calls++;
        else if (report.mismatches.length < cap) {
          report.mismatches.push({
            simulation: index,
            message_index: at,
            tool: name,
            recorded,
            ours,
          });
        }
      }
    }
    const verdict = taskSolved(db, env.db, actions.get(taskId)!);
    if (verdict.solved) report.solved++;
    else if (report.unsolved.length < cap) {
      report.unsolved.push({
        simulation: index,
        task_id: taskId,
        diff: verdict.diff ?? "",
      });
    }
  });
  return report;
}
