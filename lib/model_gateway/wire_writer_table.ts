/**
 * {@linkcode WRITERS}: the gateway's writer of each wire.
 *
 * @module
 */
import type { Wire } from "./wire_types.ts";
import type { WireWriter } from "./wire_writers.ts";
import { chat } from "./writer_openai_chat.ts";
import { messages } from "./writer_anthropic.ts";
import { responses } from "./writer_openai_responses.ts";

/** The writer of each wire. */
export const WRITERS: Record<Wire, WireWriter> = {
  openai_chat: chat,
  anthropic_messages: messages,
  openai_responses: responses,
};
