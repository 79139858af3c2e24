/**
 * A Gemini `generateContent` request as the gateway reads it: `contents`
 * (one message per content: `model` is the assistant, `user` the user,
 * its `functionResponse` parts the tool results), the tools'
 * `functionDeclarations`, and the generation settings. The model and
 * whether the answer streams are in the path, not the body.
 *
 * Left out of a message's text: thought parts (`thought: true`: the
 * model's thinking, which clients may drop from the history they send
 * back) and Gemini CLI's `<session_context>` block (the host's, not the
 * user's words). `systemInstruction` is no message (as Anthropic's
 * `system`): it is in the recorded body.
 *
 * @module
 */
import type { ExposedTool } from "../../../trace/tool_events.ts";
import { messageHash } from "../../message_hash.ts";
import {
  exposedTool,
  isObject,
  type NormMessage,
  type NormRequest,
  type NormToolCall,
  type NormToolResult,
  readArguments,
  WireShapeError,
} from "../../wire_types.ts";
import type { WireRoute } from "../wire_spec.ts";
import { pairResponses, placedCallId, type TurnCall } from "./call_ids.ts";

/** The wire's name in recorded events. */
export const GEMINI_WIRE = "gemini_generate_content";

/** `generationConfig` fields kept as the exchange's parameters. */
const GENERATION_PARAMS = [
  "temperature",
  "topP",
  "topK",
  "candidateCount",
  "maxOutputTokens",
  "stopSequences",
  "presencePenalty",
  "frequencyPenalty",
  "seed",
  "responseMimeType",
  "responseSchema",
  "responseJsonSchema",
  "thinkingConfig",
];

/** Gemini CLI's context block at the head of the first user turn. */
const SESSION_CONTEXT = /^\s*<session_context>[\s\S]*?<\/session_context>\s*/;

/** A part's text, when it is a text part that is not thinking. */
function partText(p: Record<string, unknown>): string | null {
  return typeof p.text === "string" && p.thought !== true ? p.text : null;
}

/**
 * The calls of a model turn, with the ids they carried on the wire.
 *
 * @param parts The turn's parts.
 * @param turn Its index in `contents`.
 * @returns The calls, in order (ids made from their place: `call_ids.ts`).
 */
export function callsOfParts(
  parts: unknown[],
  turn: number,
): (NormToolCall & { wire_id: string | null })[] {
  const calls: (NormToolCall & { wire_id: string | null })[] = [];
  for (const p of parts) {
    if (!isObject(p) || !isObject(p.functionCall)) continue;
    const fc = p.functionCall;
    if (typeof fc.name !== "string") continue;
    const args = fc.args ?? {};
    calls.push({
      id: placedCallId(turn, calls.length, { name: fc.name, args }),
      wire_id: typeof fc.id === "string" && fc.id !== "" ? fc.id : null,
      name: fc.name,
      ...readArguments(args),
    });
  }
  return calls;
}

/** A function response's text, and whether it says the tool failed. */
function responseText(response: unknown): { text: string; is_error: boolean } {
  if (!isObject(response)) {
    return {
      text: typeof response === "string" ? response : JSON.stringify(
        response ?? null,
      ),
      is_error: false,
    };
  }
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response.output === "string") {
    return { text: response.output, is_error: false };
  }
  if (keys.length === 1 && "error" in response) {
    const e = response.error;
    return {
      text: typeof e === "string" ? e : JSON.stringify(e),
      is_error: true,
    };
  }
  return { text: JSON.stringify(response), is_error: false };
}

function messageOf(
  c: unknown,
  turn: number,
  before: TurnCall[],
  hash: string | undefined,
): { message: NormMessage; calls: TurnCall[] } {
  if (!isObject(c)) throw new WireShapeError(`contents[${turn}] is no object`);
  const parts = Array.isArray(c.parts) ? c.parts : [];
  const role = c.role === "model" ? "assistant" : "user";
  const texts: string[] = [];
  for (const p of parts) {
    if (!isObject(p)) continue;
    let t = partText(p);
    if (t === null) continue;
    if (role === "user") t = t.replace(SESSION_CONTEXT, "");
    if (t !== "") texts.push(t);
  }
  const placed = role === "assistant" ? callsOfParts(parts, turn) : [];
  const responses = role === "user"
    ? parts.filter((p) => isObject(p) && isObject(p.functionResponse))
      .map((p) =>
        (p as { functionResponse: Record<string, unknown> })
          .functionResponse
      )
    : [];
  const ids = pairResponses(
    before,
    responses.map((r) => ({
      id: typeof r.id === "string" && r.id !== "" ? r.id : null,
      name: typeof r.name === "string" ? r.name : null,
    })),
    turn,
  );
  const results: NormToolResult[] = responses.map((r, j) => ({
    id: ids[j],
    ...responseText(r.response),
  }));
  return {
    message: {
      role,
      text: texts.join(role === "assistant" ? "" : "\n"),
      tool_calls: placed.map(({ wire_id: _, ...call }) => call),
      tool_results: results,
      hash: hash ?? messageHash(c),
    },
    calls: placed.map((x) => ({ id: x.id, wire_id: x.wire_id, name: x.name })),
  };
}

function toolsOf(body: Record<string, unknown>): ExposedTool[] {
  const out: ExposedTool[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t) || !Array.isArray(t.functionDeclarations)) continue;
    for (const d of t.functionDeclarations) {
      if (!isObject(d) || typeof d.name !== "string") continue;
      out.push(exposedTool(d.name, {
        description: d.description,
        schema: d.parametersJsonSchema ?? d.parameters,
      }));
    }
  }
  return out;
}

/**
 * Read a Gemini request.
 *
 * @param body The parsed body.
 * @param route The path it came on (model, streaming).
 * @param hashes The contents' hashes, when made already.
 * @returns The neutral request.
 * @throws {WireShapeError} Without a `contents` list.
 */
export function readGeminiRequest(
  body: unknown,
  route: WireRoute,
  hashes?: readonly string[],
): NormRequest {
  if (!isObject(body) || !Array.isArray(body.contents)) {
    throw new WireShapeError("A Gemini generateContent request has `contents`");
  }
  const messages: NormMessage[] = [];
  let before: TurnCall[] = [];
  body.contents.forEach((c, i) => {
    const { message, calls } = messageOf(c, i, before, hashes?.[i]);
    messages.push(message);
    before = calls;
  });
  const params: Record<string, unknown> = {};
  const gen = isObject(body.generationConfig) ? body.generationConfig : {};
  for (const k of GENERATION_PARAMS) if (k in gen) params[k] = gen[k];
  if (isObject(body.toolConfig)) params.toolConfig = body.toolConfig;
  if (typeof body.cachedContent === "string") {
    params.cachedContent = body.cachedContent;
  }
  return {
    wire: GEMINI_WIRE,
    model: route.model,
    stream: route.stream,
    messages,
    tools: toolsOf(body),
    params,
    session_id: null,
    previous_response_id: null,
  };
}
