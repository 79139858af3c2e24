/**
 * The gateway's memory rebuilt from the spools of open captures after a
 * restart: each conversation from its latest recorded request (its
 * messages' hashes: those of the request it continues, then its new ones),
 * the calls still waiting for their results,
 * the calls answered, and the episodes that host hooks record.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent } from "../trace/event.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Hex } from "../trace/hash.ts";
import type { ConversationBook } from "./conversation_book.ts";
import { GATEWAY_SOURCE } from "./recorder.ts";
import { isObject } from "./wire_types.ts";

/**
 * Fill a book from the store.
 *
 * @param store The store (read only here).
 * @param book The gateway's book, empty.
 * @returns Conversations restored.
 */
export async function restoreBook(
  store: HarnessStore,
  book: ConversationBook,
): Promise<number> {
  let restored = 0;
  for (const cap of store.listCaptures()) {
    if (cap.status !== "open") continue;
    const latest = new Map<string, TraceEvent>();
    const hashesOf = new Map<string, string[]>();
    const answers = new Map<string, TraceEvent>();
    for await (const ev of store.readEvents(cap.capture_id)) {
      const host = ev.source?.host ?? "";
      if (host !== GATEWAY_SOURCE) {
        if (host.startsWith("host_")) {
          book.noteHookEpisode(ev.capture_id, ev.episode_id);
          book.episode(ev.capture_id, ev.episode_id);
        }
        continue;
      }
      const ep = book.episode(ev.capture_id, ev.episode_id).state;
      const callId = ev.payload.host_call_id;
      if (ev.kind === "tool.call.started" && typeof callId === "string") {
        const tool = ev.payload.tool as { host_name: string };
        book.openCall(ev.capture_id, ev.episode_id, callId, {
          event_id: ev.event_id,
          name: tool.host_name,
          arguments: (ev.payload.arguments ?? {}) as Record<string, unknown>,
        });
      } else if (
        (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") &&
        typeof callId === "string"
      ) {
        book.markAnswered(ev.capture_id, ev.episode_id, callId);
      } else if (ev.kind === "toolset.exposed") {
        ep.toolsets.add(sha256Hex(canonicalJson(ev.payload.tools)));
      } else if (ev.kind === "model.requested") {
        const conv = isObject(ev.payload.conversation)
          ? ev.payload.conversation
          : {};
        // The request's messages: what the one it continues held, then
        // its new ones.
        const before = typeof conv.previous === "string"
          ? hashesOf.get(conv.previous) ?? []
          : [];
        const fresh = Array.isArray(conv.new_hashes)
          ? conv.new_hashes.filter((h): h is string => typeof h === "string")
          : [];
        const known = typeof conv.continues === "number" ? conv.continues : 0;
        hashesOf.set(ev.event_id, [...before.slice(0, known), ...fresh]);
        latest.set(`${ev.episode_id}\u0000${conv.first ?? ""}`, ev);
      } else if (ev.kind === "model.responded" && ev.parent_event_id) {
        answers.set(ev.parent_event_id, ev);
      }
    }
    for (const ev of latest.values()) {
      const hashes = hashesOf.get(ev.event_id) ?? [];
      if (hashes.length === 0) continue;
      const answer = answers.get(ev.event_id);
      const response = answer && isObject(answer.payload.response)
        ? answer.payload.response
        : null;
      const conv = book.remember(null, {
        capture_id: ev.capture_id,
        episode_id: ev.episode_id,
        hashes,
        answer: response
          ? {
            text: typeof response.text === "string" ? response.text : "",
            call_ids: Array.isArray(response.tool_call_ids)
              ? response.tool_call_ids.filter((x) => typeof x === "string")
              : [],
          }
          : null,
        request_event_id: ev.event_id,
      });
      if (response && typeof response.id === "string") {
        book.rememberResponse(conv, response.id);
      }
      restored++;
    }
  }
  return restored;
}
