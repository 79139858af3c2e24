/**
 * host_a: the `harness_transcript` the forwarder adds at Stop,
 * SubagentStop and PreCompact (see `lib/forwarder/transcript.ts`) → one
 * `model.responded` per assistant message (its usage as the host recorded
 * it) and a `message` (assistant) per message with text. The server maps
 * what arrives; it never opens the transcript.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/events.ts";
import { message } from "../trace/episode_events.ts";
import { modelResponded } from "../trace/model_events.ts";
import { objectField } from "./common.ts";

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** What {@linkcode transcriptEvents} adds or leaves out. */
export interface TranscriptEventOptions {
  /**
   * The hook's `last_assistant_message`, recorded by the caller: the last
   * turn's text is not repeated when it is given.
   */
  finalText?: string;
  /** Fields added to each event (`agent_id` …). */
  extra?: Record<string, unknown>;
}

/**
 * Map the transcript turns a payload carries.
 *
 * @param p The hook payload.
 * @param ctx Event context.
 * @param options The text already recorded, fields added to each event.
 * @returns Events, in the transcript's order.
 */
export function transcriptEvents(
  p: Record<string, unknown>,
  ctx: EventContext,
  options: TranscriptEventOptions = {},
): UnsealedEvent[] {
  const { finalText, extra = {} } = options;
  const t = objectField(p, "harness_transcript");
  const turns = Array.isArray(t.turns) ? t.turns : [];
  let lastText = -1;
  if (finalText !== undefined) {
    for (let i = 0; i < turns.length; i++) {
      if (typeof turns[i]?.text === "string" && turns[i].text) lastText = i;
    }
  }
  const out: UnsealedEvent[] = [];
  turns.forEach((turn: unknown, i: number) => {
    if (typeof turn !== "object" || turn === null) return;
    const r = turn as Record<string, unknown>;
    const u = objectField(r, "usage");
    const input = num(u.input_tokens);
    const output = num(u.output_tokens);
    const model = typeof r.model === "string" ? r.model : null;
    const mctx = {
      ...ctx,
      source: { ...ctx.source, model: model ?? ctx.source.model },
    };
    out.push(modelResponded(mctx, {
      response: {
        model,
        message_id: typeof r.message_id === "string" ? r.message_id : null,
        host_timestamp: typeof r.timestamp === "string" ? r.timestamp : null,
        ...(input !== null || output !== null
          ? {
            usage: {
              input_tokens: input,
              output_tokens: output,
              cache_creation_input_tokens: num(u.cache_creation_input_tokens),
              cache_read_input_tokens: num(u.cache_read_input_tokens),
              total_tokens: (input ?? 0) + (output ?? 0),
            },
          }
          : {}),
      },
      source: "transcript",
      ...extra,
    }, { actor: "host" }));
    if (typeof r.text === "string" && r.text && i !== lastText) {
      out.push(message(mctx, {
        role: "assistant",
        text: r.text,
        source: "transcript",
        ...extra,
      }));
    }
  });
  return out;
}
