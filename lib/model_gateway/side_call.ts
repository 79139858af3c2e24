/**
 * Side calls: model calls a host makes for a session that are no step of
 * its conversation (OpenCode's title and summary agents: the session's
 * opening words sent to its small model under a fixed system prompt). The
 * gateway records one in the session's episode, as `model.requested` and
 * `model.responded` with `side_call: {kind, host}`, and nothing of it as the
 * conversation's (no user or assistant `message`, no call). Its tokens stay
 * with the mark (`model.responded.payload.side_call.usage`), not in
 * `response.usage`: an episode's tokens are its conversation's, the
 * host's own count (OpenCode counts no title call in a session's tokens).
 *
 * A side call is known by the system prompt the host gives it, read from
 * the request (`system`, `instructions`, or its system and developer
 * messages), and only when it offers no tools.
 *
 * @module
 */
import type { NormRequest } from "./wire_types.ts";

/** What a side call is. */
export interface SideCall {
  /** `title`, `summary`. */
  kind: string;
  /** The host whose prompt it is (`opencode`). */
  host: string;
}

/** The system prompts of known side calls (their opening words). */
const SIGNATURES: readonly (SideCall & { opens: string })[] = [
  // OpenCode 1.18's hidden agents `title` and `summary`.
  {
    kind: "title",
    host: "opencode",
    opens: "You are a title generator. You output ONLY a thread title.",
  },
  {
    kind: "summary",
    host: "opencode",
    opens: "Summarize what was done in this conversation.",
  },
];

function textOf(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (!Array.isArray(v)) return [];
  return v.flatMap((b) =>
    typeof b === "string" ? [b] : typeof b === "object" && b !== null &&
        typeof (b as { text?: unknown }).text === "string"
      ? [(b as { text: string }).text]
      : []
  );
}

/**
 * The side call a request is, or null.
 *
 * @param req The request as read.
 * @param body The request body as parsed.
 * @returns The side call, or null for a step of the conversation.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * const title = {
 *   wire: "anthropic_messages" as const, model: "claude-haiku-4-5", stream: true,
 *   messages: [], tools: [], params: {}, session_id: null, previous_response_id: null,
 * };
 * const body = { system: "You are a title generator. You output ONLY a thread title. Nothing else." };
 * equal(sideCallOf(title, body)?.kind, "title");
 * equal(sideCallOf(title, { system: "You are a helpful assistant." }), null);
 * ```
 */
export function sideCallOf(req: NormRequest, body: unknown): SideCall | null {
  if (req.tools.length > 0) return null;
  const b = typeof body === "object" && body !== null
    ? body as Record<string, unknown>
    : {};
  const prompts = [
    ...textOf(b.system),
    ...textOf(b.instructions),
    ...req.messages.filter((m) => m.role === "system").map((m) => m.text),
  ].map((t) => t.trimStart());
  for (const s of SIGNATURES) {
    if (prompts.some((p) => p.startsWith(s.opens))) {
      return { kind: s.kind, host: s.host };
    }
  }
  return null;
}
