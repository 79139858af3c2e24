/**
 * A Gemini answer as the gateway reads it, whole or streamed
 * (`:streamGenerateContent?alt=sse`: each event a `GenerateContentResponse`
 * chunk, events ending `\r\n\r\n`).
 *
 * - Text: the first candidate's text parts that are not thinking
 *   (`thought: true`), joined; calls: its `functionCall` parts, in order
 *   (ids: `call_ids.ts`); `stop_reason`: its `finishReason` (`STOP`,
 *   `MAX_TOKENS`, `SAFETY` …; `STOP` also when the model calls tools);
 *   `id`: `responseId`; `model`: `modelVersion`.
 * - Usage ({@linkcode geminiUsage}): `usageMetadata` as the upstream
 *   counted it. A stream's chunks each carry the running total, so the last
 *   one is the answer's usage: chunks are never added up.
 * - A stream is complete once a chunk with a `finishReason` arrived (the
 *   API sends no end event); a stream cut before it is incomplete.
 *
 * @module
 */
import {
  isObject,
  type NormRequest,
  type NormResponse,
  type NormToolCall,
  type NormUsage,
  numberOrNull,
  readArguments,
  type StreamAccumulator,
  WireShapeError,
} from "../../wire_types.ts";
import { placedCallId } from "./call_ids.ts";

/** Neutral usage with Gemini's thinking tokens beside it. */
export interface GeminiUsage extends NormUsage {
  /** `thoughtsTokenCount` (counted in `output_tokens` too). */
  thoughts_tokens: number | null;
}

/**
 * `usageMetadata` as neutral usage: `input_tokens` is `promptTokenCount`
 * (which holds the cached part, `cachedContentTokenCount`, given as
 * `cache_read_input_tokens`, and the tool-use prompt's), `output_tokens`
 * the candidates' and the thoughts' tokens (`candidatesTokenCount` +
 * `thoughtsTokenCount`, as OpenAI's completion tokens hold the reasoning
 * ones), `total_tokens` is `totalTokenCount`.
 *
 * @param u `usageMetadata`.
 * @returns The usage, or null when there is none.
 *
 * @example
 * ```ts
 * import { deepEqual } from "node:assert/strict";
 * import { geminiUsage } from "./read_answer.ts";
 * deepEqual(
 *   geminiUsage({ promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 7, thoughtsTokenCount: 20, totalTokenCount: 127 }),
 *   { input_tokens: 100, output_tokens: 27, cache_read_input_tokens: 60, total_tokens: 127, thoughts_tokens: 20 },
 * );
 * ```
 */
export function geminiUsage(u: unknown): GeminiUsage | null {
  if (!isObject(u)) return null;
  const prompt = numberOrNull(u.promptTokenCount);
  const toolPrompt = numberOrNull(u.toolUsePromptTokenCount);
  const candidates = numberOrNull(u.candidatesTokenCount);
  const thoughts = numberOrNull(u.thoughtsTokenCount);
  const input = prompt === null && toolPrompt === null
    ? null
    : (prompt ?? 0) + (toolPrompt ?? 0);
  const output = candidates === null && thoughts === null
    ? null
    : (candidates ?? 0) + (thoughts ?? 0);
  return {
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: numberOrNull(u.cachedContentTokenCount),
    total_tokens: numberOrNull(u.totalTokenCount) ??
      (input === null && output === null ? null : (input ?? 0) + (output ?? 0)),
    thoughts_tokens: thoughts,
  };
}

/** The first candidate of an answer or chunk. */
function firstCandidate(body: Record<string, unknown>):
  | Record<
    string,
    unknown
  >
  | null {
  const cs = Array.isArray(body.candidates) ? body.candidates : [];
  const c = cs.find((c) => isObject(c) && (c.index ?? 0) === 0) ?? cs[0];
  return isObject(c) ? c : null;
}

function partsOf(candidate: Record<string, unknown> | null): unknown[] {
  const content = candidate && isObject(candidate.content)
    ? candidate.content
    : null;
  return content && Array.isArray(content.parts) ? content.parts : [];
}

/** Gathers the text and calls of a model turn, part by part. */
class TurnParts {
  #text = "";
  #calls: NormToolCall[] = [];
  readonly #turn: number;

  constructor(turn: number) {
    this.#turn = turn;
  }

  add(parts: unknown[]): void {
    for (const p of parts) {
      if (!isObject(p)) continue;
      if (typeof p.text === "string" && p.thought !== true) {
        this.#text += p.text;
      }
      const fc = isObject(p.functionCall) ? p.functionCall : null;
      if (!fc || typeof fc.name !== "string") continue;
      const args = fc.args ?? {};
      this.#calls.push({
        id: placedCallId(this.#turn, this.#calls.length, {
          name: fc.name,
          args,
        }),
        name: fc.name,
        ...readArguments(args),
      });
    }
  }

  get text(): string {
    return this.#text;
  }

  get calls(): NormToolCall[] {
    return this.#calls;
  }
}

/**
 * Read a whole Gemini answer.
 *
 * @param body The parsed body.
 * @param request The request it answers (the answer's place in `contents`).
 * @returns The neutral answer.
 * @throws {WireShapeError} When it is no `GenerateContentResponse`.
 */
export function readGeminiAnswer(
  body: unknown,
  request: NormRequest,
): NormResponse {
  if (
    !isObject(body) ||
    !(Array.isArray(body.candidates) || isObject(body.promptFeedback))
  ) {
    throw new WireShapeError(
      "A Gemini answer has `candidates` (or `promptFeedback`)",
    );
  }
  const c = firstCandidate(body);
  const turn = new TurnParts(request.messages.length);
  turn.add(partsOf(c));
  return {
    id: typeof body.responseId === "string" ? body.responseId : null,
    model: typeof body.modelVersion === "string"
      ? body.modelVersion
      : request.model,
    text: turn.text,
    tool_calls: turn.calls,
    stop_reason: c && typeof c.finishReason === "string"
      ? c.finishReason
      : blockReason(body),
    usage: geminiUsage(body.usageMetadata),
  };
}

/** A prompt the API blocked: `promptFeedback.blockReason`. */
function blockReason(body: Record<string, unknown>): string | null {
  const f = isObject(body.promptFeedback) ? body.promptFeedback : null;
  return f && typeof f.blockReason === "string" ? f.blockReason : null;
}

/** A streamed Gemini answer, gathered chunk by chunk. */
export class GeminiStream implements StreamAccumulator {
  readonly #turn: TurnParts;
  readonly #request: NormRequest;
  #id: string | null = null;
  #model: string | null = null;
  #stop: string | null = null;
  #usage: unknown = null;
  /** A chunk with a `finishReason` (or a blocked prompt) arrived. */
  complete = false;

  /**
   * Create a `GeminiStream`.
   *
   * @param request The request it answers.
   */
  constructor(request: NormRequest) {
    this.#request = request;
    this.#turn = new TurnParts(request.messages.length);
  }

  /**
   * Take one event.
   *
   * @param _event The `event:` name (Gemini sends none).
   * @param data The chunk's JSON.
   */
  add(_event: string | null, data: string): void {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(chunk)) return;
    if (typeof chunk.responseId === "string") this.#id ??= chunk.responseId;
    if (typeof chunk.modelVersion === "string") {
      this.#model ??= chunk.modelVersion;
    }
    // The running total: the latest one is the answer's.
    if (isObject(chunk.usageMetadata)) this.#usage = chunk.usageMetadata;
    const c = firstCandidate(chunk);
    this.#turn.add(partsOf(c));
    if (c && typeof c.finishReason === "string") {
      this.#stop = c.finishReason;
      this.complete = true;
    } else if (blockReason(chunk) !== null) {
      this.#stop = blockReason(chunk);
      this.complete = true;
    }
  }

  /** The answer so far. */
  result(): NormResponse {
    return {
      id: this.#id,
      model: this.#model ?? this.#request.model,
      text: this.#turn.text,
      tool_calls: this.#turn.calls,
      stop_reason: this.#stop,
      usage: geminiUsage(this.#usage),
    };
  }
}
