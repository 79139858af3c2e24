/**
 * Checks the two bindings share on what a model sent: structured output
 * (JSON); tool arguments are read by the neutral chat shape's
 * `parseToolArguments`, re-exported here.
 *
 * @module
 */
import { ModelResponseError } from "./binding_errors.ts";

/** How a tool call's arguments text becomes the chat shape's arguments. */
export { parseToolArguments } from "../model_gateway/chat_shape.ts";

/**
 * Check that an answer asked for structured output is JSON.
 *
 * @param content The answer's text.
 * @param asked The structured output's name, and the model id (for the message).
 * @throws {ModelResponseError} When the text is not JSON.
 */
export function checkStructuredJson(
  content: string,
  asked: { name: string; model: string },
): void {
  const { name, model } = asked;
  try {
    JSON.parse(content);
  } catch (err) {
    throw new ModelResponseError(
      `${model} answered structured output ${
        JSON.stringify(name)
      } with text that is not JSON (${
        (err as Error).message
      }); the server may not support json_schema response formats`,
      { excerpt: content, cause: err },
    );
  }
}

/**
 * Whether a value is a plain object (not null, not an array).
 *
 * @param v The value.
 * @returns True for an object.
 */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The start of a value as text, for an error's excerpt.
 *
 * @param v The value.
 * @returns At most 500 characters.
 */
export function excerptOf(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v) ?? String(v);
  return s.slice(0, 500);
}
