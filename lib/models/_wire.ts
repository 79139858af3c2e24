/**
 * Checks the two bindings share on what a model sent: tool arguments
 * (a JSON object, or null with the reason) and structured output (JSON).
 *
 * @module
 */
import { ModelResponseError } from "./binding_errors.ts";

/**
 * Parse a tool call's arguments as the model sent them. Whitespace only
 * (some servers send `""` for a tool without parameters) is `{}`.
 *
 * @param raw The arguments text.
 * @returns The object, or null with why.
 */
export function parseToolArguments(
  raw: string,
): { arguments: Record<string, unknown> | null; arguments_error?: string } {
  if (raw.trim() === "") return { arguments: {} };
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    return {
      arguments: null,
      arguments_error: `the arguments are not valid JSON (${
        (err as Error).message
      })`,
    };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return {
      arguments: null,
      arguments_error: `the arguments are JSON but not an object (${
        Array.isArray(v) ? "an array" : v === null ? "null" : typeof v
      })`,
    };
  }
  return { arguments: v as Record<string, unknown> };
}

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
