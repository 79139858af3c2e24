/**
 * host_a: the `harness_transcript` the forwarder adds at Stop,
 * StopFailure, SubagentStop, PreCompact and SessionEnd (see
 * `lib/forwarder/transcript.ts`) → one `model.responded` per assistant
 * message (its usage as the host recorded it) and a `message` (assistant)
 * per message with text. The server maps
 * what arrives; it never opens the transcript.
 *
 * - The text the hook gives as `last_assistant_message` is recorded by the
 *   caller: the turn that carries it (equal text, the last such turn) gives
 *   no second `message`; a turn with other text is always kept, even when
 *   the turn with that text was not in what the forwarder read.
 * - A turn the host made up (model `<synthetic>`: the API error it showed
 *   the user) is no model call: no `model.responded`.
 * - A turn marked `continued` (the read before ended inside its message)
 *   was counted then: no second `model.responded`, its text still kept.
 * - A transcript the payload names that does not exist (`missing`) gives
 *   `annotation` `usage.partial`: the episode's token count misses the
 *   model calls that transcript would hold.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import { annotation, message } from "../trace/episode_events.ts";
import { modelResponded } from "../trace/model_events.ts";
import { objectField } from "./common.ts";

/** The model name host_a gives a turn it wrote itself (an API error shown). */
const SYNTHETIC = "<synthetic>";

/** Index of the last (or first) turn whose text is `text` (trimmed), or -1. */
function turnCarrying(
  turns: unknown[],
  text: string | null | undefined,
  first = false,
): number {
  if (text === undefined || text === null) return -1;
  const want = text.trim();
  const fits = (turn: unknown) => {
    const t = (turn as { text?: unknown } | null)?.text;
    return typeof t === "string" && t.trim() === want;
  };
  return first ? turns.findIndex(fits) : turns.findLastIndex(fits);
}

/**
 * Whether the turns a payload carries include one with this text (false
 * when the payload carries no transcript).
 *
 * @param p The hook payload.
 * @param text The text.
 * @returns True when a turn carries it.
 */
export function transcriptCarries(
  p: Record<string, unknown>,
  text: string,
): boolean {
  const turns = objectField(p, "harness_transcript").turns;
  return Array.isArray(turns) && turnCarrying(turns, text) >= 0;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** What {@linkcode transcriptEvents} adds or leaves out. */
export interface TranscriptEventOptions {
  /**
   * The hook's `last_assistant_message`, recorded by the caller: the turn
   * carrying that text (the last such) gives no second `message`.
   */
  finalText?: string;
  /**
   * An earlier hook's answer, recorded then, whose turn was not read then:
   * the first turn carrying it gives no second `message`.
   */
  heldText?: string | null;
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
  const { finalText, heldText, extra = {} } = options;
  const t = objectField(p, "harness_transcript");
  if (t.missing === true) {
    return [annotation(ctx, {
      type: "usage.partial",
      reason: "transcript_missing",
      transcript_field: typeof t.field === "string" ? t.field : null,
      ...extra,
    }, { actor: "host" })];
  }
  const turns = Array.isArray(t.turns) ? t.turns : [];
  const said = new Set([
    turnCarrying(turns, finalText),
    turnCarrying(turns, heldText, true),
  ]);
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
      source: {
        ...ctx.source,
        model: model === SYNTHETIC
          ? ctx.source.model
          : model ?? ctx.source.model,
      },
    };
    if (model !== SYNTHETIC && r.continued !== true) {
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
    }
    if (typeof r.text === "string" && r.text && !said.has(i)) {
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
