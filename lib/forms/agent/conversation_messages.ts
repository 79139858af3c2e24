/**
 * How a conversation writes what it knows into the model's context: a
 * tool's answer as the tool message's text, and the package's successful
 * lookups as the model's own earlier tool calls with their results (failed
 * lookups stay out: a guessed name that matched nobody is noise).
 *
 * @module
 */
import type { ChatMessage, ChatToolCall } from "../../models/chat_types.ts";
import type { LookupResult } from "./agent_session.ts";

/** The sentence a package adds to the model's instructions. */
export const PACKAGE_NOTE =
  "Results of read-only lookups that were needed are already in the conversation as your own tool calls; do not repeat them. State-changing tools accept only the values their schemas list.";

/**
 * A tool's answer as the text of its tool message.
 *
 * @param ok Whether it succeeded.
 * @param result Its result, or the error message.
 * @returns The text (`Error: …` for a failure).
 */
export function toolContent(ok: boolean, result: unknown): string {
  const text = typeof result === "string" ? result : JSON.stringify(result);
  return ok ? text ?? "null" : `Error: ${text}`;
}

/**
 * The messages that show the successful lookups as the model's own calls.
 *
 * @param made Lookups made.
 * @param nextId Makes the calls' ids.
 * @returns The messages (none when no lookup succeeded) and how many were shown.
 */
export function lookupMessages(
  made: LookupResult[],
  nextId: () => string,
): { messages: ChatMessage[]; shown: number } {
  const shown = made.filter((l) => l.ok);
  if (!shown.length) return { messages: [], shown: 0 };
  const calls: ChatToolCall[] = shown.map((l) => ({
    id: nextId(),
    name: l.tool,
    arguments: l.args,
    raw_arguments: JSON.stringify(l.args),
  }));
  return {
    messages: [
      { role: "assistant", content: null, tool_calls: calls },
      ...shown.map((l, i): ChatMessage => ({
        role: "tool",
        tool_call_id: calls[i].id,
        name: l.tool,
        content: toolContent(l.ok, l.result),
      })),
    ],
    shown: shown.length,
  };
}
