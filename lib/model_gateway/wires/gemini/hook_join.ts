/**
 * {@linkcode GeminiHookJoin}: the episode of Gemini CLI's hooks for a model
 * request that names none. Gemini CLI 0.61 sends no session id in any
 * header or body, its hooks cannot add one (a `BeforeModel` hook may change
 * the request's contents and sampling, not its headers), and
 * `GEMINI_CLI_CUSTOM_HEADERS` is fixed for the process while the session id
 * is made inside it. What the hooks and the request share is **the user's
 * prompt**: `BeforeAgent` gives it (recorded as the episode's user
 * `message`, and seen by the gateway as it is stored), and every request
 * that starts a turn ends with it:
 *
 * - the router's classifier call (`generateContent`, no tools, which no hook
 *   sees): its last content is the prompt;
 * - the turn's first main call (`streamGenerateContent`): its last content is
 *   the prompt (after Gemini CLI's `<session_context>` part in the first turn).
 *
 * A request whose last message is the user's text names the open episode
 * (no `SessionEnd` yet) of its capture whose latest prompt that text is (or
 * whose first line or lines it is: `@file` references add the files after
 * it), when exactly one does; the requests after it in the turn continue its conversation (their
 * last message is a function response), which keeps the episode. Two live
 * sessions waiting on the same prompt cannot be told apart: neither is
 * named (the gateway's own episode then), as the hooks' correlator links
 * only what is unambiguous. The hook is stored before the request is sent
 * (Gemini CLI waits for each hook; the hook client waits for the server's
 * answer, up to its time-out), so the prompt is known when the request
 * arrives.
 *
 * @module
 */
import type { NormRequest } from "../../wire_types.ts";

/** What the join reads of a stored event. */
export interface JoinEvent {
  /** Capture. */
  capture_id: string;
  /** Episode. */
  episode_id: string;
  /** Kind (`message`, `episode.finished`, …). */
  kind: string;
  /** Producer (`host_b` for Gemini CLI's hooks). */
  source: { host: string };
  /** Payload (`role`, `text` of a message). */
  payload: unknown;
}

/** The latest prompt of an open hooks episode. */
interface Waiting {
  episode: string;
  prompt: string;
}

/** Most open episodes remembered per capture (the least recent dropped). */
const MAX_EPISODES = 256;

/** Gemini CLI's hooks' episodes, by the prompt they wait on. */
export class GeminiHookJoin {
  /** Capture → episode → its latest prompt (insertion order: least recent first). */
  readonly #open = new Map<string, Map<string, Waiting>>();

  /**
   * Learn of an event another route stored: Gemini CLI's `BeforeAgent`
   * (the user's `message`) and `SessionEnd` (`episode.finished`).
   *
   * @param ev A stored event.
   */
  observe(ev: JoinEvent): void {
    if (ev.source.host !== "host_b") return;
    let open = this.#open.get(ev.capture_id);
    if (ev.kind === "episode.finished") {
      open?.delete(ev.episode_id);
      return;
    }
    const p = ev.payload as { role?: unknown; text?: unknown } | null;
    if (ev.kind !== "message" || p?.role !== "user") return;
    if (typeof p.text !== "string" || p.text.trim() === "") return;
    if (!open) this.#open.set(ev.capture_id, open = new Map());
    open.delete(ev.episode_id);
    open.set(ev.episode_id, {
      episode: ev.episode_id,
      prompt: p.text.trim(),
    });
    if (open.size > MAX_EPISODES) {
      open.delete(open.keys().next().value!);
    }
  }

  /**
   * The hooks' episode a request starts a turn of, when exactly one fits.
   *
   * @param capture The request's capture.
   * @param request The request as read.
   * @returns The episode id, or null.
   */
  episodeOf(capture: string, request: NormRequest): string | null {
    const open = this.#open.get(capture);
    const last = request.messages[request.messages.length - 1];
    if (!open || !last || last.role !== "user") return null;
    if (last.tool_results.length > 0) return null;
    const text = last.text.trim();
    if (text === "") return null;
    let found: string | null = null;
    for (const w of open.values()) {
      if (text !== w.prompt && !text.startsWith(`${w.prompt}\n`)) continue;
      if (found !== null) return null; // two sessions wait on it
      found = w.episode;
    }
    return found;
  }
}
