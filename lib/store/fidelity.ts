/**
 * Capture fidelity F0–F4 (contract section 2.4), inferred from what the
 * events show:
 *
 * - F1: `message` events (user or assistant messages).
 * - F2: tool calls (`tool.call.*`).
 * - F3: state — `blackboard.write` events, or tool-call payloads carrying
 *   `state_before`, `state_after`, `state_delta` or `snapshot`.
 * - F4: state plus decision context — F3 evidence and `model.requested` /
 *   `model.responded` events.
 *
 * The level is the highest whose evidence is present; lower evidence is not
 * required (a gateway capture with snapshots and no messages is F3).
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";

/** A fidelity level. */
export type Fidelity = "F0" | "F1" | "F2" | "F3" | "F4";

/** Payload keys that count as state evidence on tool-call events. */
export const STATE_KEYS: readonly string[] = [
  "state_before",
  "state_after",
  "state_delta",
  "snapshot",
];

/** Accumulates fidelity evidence over a stream of events. */
export class FidelityTracker {
  #messages = false;
  #tools = false;
  #state = false;
  #decisions = false;

  /**
   * Look at one event.
   *
   * @param ev The event.
   */
  observe(ev: Pick<TraceEvent, "kind" | "payload">): void {
    const kind = ev.kind;
    if (kind === "message") this.#messages = true;
    else if (kind.startsWith("tool.call.")) {
      this.#tools = true;
      if (!this.#state) {
        for (const key of STATE_KEYS) {
          if (ev.payload[key] !== undefined) this.#state = true;
        }
      }
    } else if (kind === "blackboard.write") this.#state = true;
    else if (kind === "model.requested" || kind === "model.responded") {
      this.#decisions = true;
    }
  }

  /** The level the evidence so far supports. */
  get level(): Fidelity {
    if (this.#state && this.#decisions) return "F4";
    if (this.#state) return "F3";
    if (this.#tools) return "F2";
    if (this.#messages) return "F1";
    return "F0";
  }
}

/**
 * Fidelity of a list of events.
 *
 * @param events The events.
 * @returns The level.
 */
export function inferFidelity(
  events: Iterable<Pick<TraceEvent, "kind" | "payload">>,
): Fidelity {
  const t = new FidelityTracker();
  for (const ev of events) t.observe(ev);
  return t.level;
}
