/**
 * Reading trajectories out of a parsed file, normalized across formats: a
 * τ² simulation, a τ-bench v1 trajectory or an OpenAI-style message list,
 * with its task, trial, reward, messages and the tools the file declares.
 * One at a time, so a streamed file is read a simulation at a time.
 *
 * @module
 */
import type { ToolsetExposedPayload } from "../trace/tool_events.ts";
import { ImportError } from "./import_error.ts";
import { openaiToolset, tau2Toolset } from "./tool_defs.ts";
import type { ImportFormat } from "./import_formats.ts";

/** One trajectory, normalized across formats. */
export interface Trajectory {
  task_id: string;
  trial: number;
  reward: number | null;
  messages: unknown[];
  /** How tool calls are written: `openai` (function.name, arguments as JSON text) or `tau2` (name, arguments object). */
  style: "openai" | "tau2";
  /** The tools the file says the agent had, or null. */
  toolset: ToolsetExposedPayload | null;
  /** τ²'s simulation id, when the file gives one. */
  simulation?: string;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The trajectories of a parsed file.
 *
 * @param format The file's format.
 * @param data The parsed file.
 * @returns Its trajectories, in order.
 * @throws {ImportError} Naming the first that is not what the format says.
 */
export function trajectories(
  format: ImportFormat,
  data: unknown,
): Trajectory[] {
  if (format === "tau2") {
    if (!isObj(data) || !Array.isArray(data.simulations)) {
      throw new ImportError(
        "file",
        "a tau2 file is an object with a simulations list",
      );
    }
    const toolset = tau2Toolset(data);
    return data.simulations.map((s, index) =>
      tau2Trajectory(s, { index, toolset })
    );
  }
  if (!Array.isArray(data)) {
    throw new ImportError("file", `a ${format} file is a JSON list`);
  }
  return data.map((t, index) => listTrajectory(t, { format, index }));
}

/**
 * One τ² simulation as a trajectory.
 *
 * @param s The simulation as parsed.
 * @param at Its position in `simulations`, and the tools the file declares
 *   (`tau2Toolset`, or null).
 * @returns The trajectory.
 * @throws {ImportError} When it has no messages, or a trial or reward JSON cannot hold.
 */
export function tau2Trajectory(
  s: unknown,
  at: { index: number; toolset: ToolsetExposedPayload | null },
): Trajectory {
  const { index: i, toolset } = at;
  if (!isObj(s) || !Array.isArray(s.messages)) {
    throw new ImportError(`simulation ${i}`, "no messages list");
  }
  const where = `simulation ${i}`;
  return {
    task_id: String(s.task_id ?? i),
    trial: trialOf(s.trial, where),
    reward: rewardOf(
      isObj(s.reward_info) ? s.reward_info.reward : null,
      where,
    ),
    messages: s.messages,
    style: "tau2",
    toolset,
    ...(typeof s.id === "string" && s.id ? { simulation: s.id } : {}),
  };
}

/**
 * One element of a τ-bench v1 or OpenAI-messages file as a trajectory.
 *
 * @param t The element as parsed.
 * @param at The format (`tau-bench` or `openai-messages`) and its position
 *   in the file's list.
 * @returns The trajectory.
 * @throws {ImportError} When it is not what the format says.
 */
export function listTrajectory(
  t: unknown,
  at: { format: ImportFormat; index: number },
): Trajectory {
  const { format, index: i } = at;
  if (format === "tau-bench") {
    if (!isObj(t) || !Array.isArray(t.traj)) {
      throw new ImportError(`trajectory ${i}`, "no traj list");
    }
    return {
      task_id: String(t.task_id ?? i),
      trial: trialOf(t.trial, `trajectory ${i}`),
      reward: rewardOf(t.reward, `trajectory ${i}`),
      messages: t.traj,
      style: "openai",
      toolset: null,
    };
  }
  const messages = Array.isArray(t)
    ? t
    : isObj(t) && Array.isArray(t.messages)
    ? t.messages
    : null;
  if (!messages) {
    throw new ImportError(
      `trajectory ${i}`,
      "expected a list of messages or {messages}",
    );
  }
  let toolset: ToolsetExposedPayload | null = null;
  try {
    toolset = isObj(t) ? openaiToolset(t.tools) : null;
  } catch (err) {
    throw new ImportError(`trajectory ${i}`, (err as Error).message);
  }
  return {
    task_id: String(isObj(t) ? t.id ?? t.task_id ?? i : i),
    trial: trialOf(isObj(t) ? t.trial : 0, `trajectory ${i}`),
    reward: rewardOf(isObj(t) ? t.reward : null, `trajectory ${i}`),
    messages,
    style: "openai",
    toolset,
  };
}

/** A trajectory's trial number: absent is 0; one JSON cannot hold is refused. */
function trialOf(v: unknown, where: string): number {
  const trial = Number(v ?? 0);
  if (!Number.isFinite(trial)) {
    throw new ImportError(
      where,
      `"trial" is ${
        typeof v === "number" ? String(v) : JSON.stringify(v)
      }, not a finite number (a literal like 1e400 is past what JSON numbers hold): write the trial as a small integer`,
    );
  }
  return trial;
}

/** A trajectory's reward: a finite number, or null when it has none. */
function rewardOf(v: unknown, where: string): number | null {
  if (typeof v !== "number") return null;
  if (!Number.isFinite(v)) {
    throw new ImportError(
      where,
      `"reward" is ${v}, not a finite number (a literal like 1e400 is past what JSON numbers hold)`,
    );
  }
  return v;
}
