/**
 * What the conversation book (`conversation_book.ts`) holds of one
 * conversation: its end (the last request's state and answer), what the
 * recorder wrote of it last, and the tool calls waiting for their results;
 * with the two constructors every holder uses (`pendingEnd`, `answerKey`).
 *
 * @module
 */
import type { NormResponse } from "./wire_types.ts";

/** The answer of a request as the next request repeats it. */
export interface AnswerKey {
  /** Its text, without whitespace (clients re-serialize it). */
  text: string;
  /** Its tool calls' ids, in order. */
  call_ids: string[];
}

/**
 * The state of a conversation's last request: in flight, answered (the
 * answer read, or readable on demand), or failed (no answer reached the
 * client: an upstream error, a time-out, a client that went away, a cut
 * stream).
 */
export interface ConversationEnd {
  /** Where the last request stands. */
  state: "pending" | "answered" | "failed";
  /** The answer, once read (null: not read yet, or none). */
  answer: AnswerKey | null;
  /**
   * Reads the answer when it is not read yet (the first reader caches it);
   * for a stream in flight, what came so far. Null when there is nothing
   * to read.
   */
  read: (() => NormResponse | null) | null;
  /** The exchange the end belongs to (only it may settle the end). */
  owner: object | null;
}

/** What the recorder last wrote of a conversation. */
export interface RecordedState {
  /** The `model.requested` event of its latest recorded request. */
  request_event_id: string | null;
  /** The prefix hash of that request's messages (`extendPrefix` over them). */
  head: string | null;
  /** How many messages that head covers. */
  length: number;
  /**
   * Digests of that request's long top-level body fields, by name
   * (`recorded_body.ts`): the next request leaves out those it has the
   * same. Absent: none known (after a restart, for a spill a stopped
   * process left, after a recording that failed).
   */
  fields?: Record<string, string>;
}

/** One conversation as the book last saw it (the agent form's running conversation is `lib/forms/agent/conversation.ts`'s `Conversation`). */
export interface ConversationEntry {
  /** Capture it records into. */
  capture_id: string;
  /** Episode it records into. */
  episode_id: string;
  /** Hashes of the messages of its latest request. */
  hashes: string[];
  /** Its latest request's state and answer. */
  end: ConversationEnd;
  /** What the recorder wrote last. */
  recorded: RecordedState;
  /**
   * The `model.requested` id of its latest request to arrive (given on
   * arrival; recorded under it once answered).
   */
  latest?: string | null;
  /** Continued by `previous_response_id` (its input holds only new items). */
  chained?: boolean;
  /** Dropped from the book (bounds). */
  dropped?: boolean;
}

/** A tool call waiting for its result. */
export interface PendingCall {
  /** Its `tool.call.started` event. */
  event_id: string;
  /** Tool name. */
  name: string;
  /** Arguments as recorded. */
  arguments: Record<string, unknown>;
}

/** A fresh end: in flight, nothing to read yet. */
export function pendingEnd(owner: object | null): ConversationEnd {
  return { state: "pending", answer: null, read: null, owner };
}

/**
 * The answer's key: its text without whitespace and its call ids.
 *
 * @param text The answer's text.
 * @param callIds Its tool calls' ids.
 * @returns The key.
 */
export function answerKey(text: string, callIds: string[]): AnswerKey {
  return { text: text.replace(/\s+/g, ""), call_ids: callIds };
}
