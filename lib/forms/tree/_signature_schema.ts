/**
 * The JSON Schema of a residual leaf's outputs, in the strict form that
 * OpenAI's `json_schema` response format accepts (every property required,
 * no other properties), and the decoding of an answer back to values.
 *
 * Strict schemas cannot say "any object" or "any array", so outputs typed
 * `object`, `array` or `json` travel as JSON text (a string the model
 * writes) and are parsed back; every other type is asked for directly,
 * with its `enum` and `minimum`.
 *
 * @module
 */
import type { Signature, SignatureField } from "../../package/ir.ts";
import type { JsonSchema } from "../../models/chat_types.ts";
import { ModelResponseError } from "../../models/binding_errors.ts";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const DIRECT = new Set(["string", "integer", "number", "boolean", "null"]);

function asText(f: SignatureField): boolean {
  return !DIRECT.has(f.type);
}

/**
 * The schema of one field.
 *
 * @param f The field.
 * @param strict Whether structured types travel as JSON text.
 * @returns Its schema.
 */
export function fieldSchema(f: SignatureField, strict: boolean): JsonSchema {
  const text = strict && asText(f);
  const s: JsonSchema = {};
  if (text) {
    s.type = "string";
    if (f.enum) s.enum = f.enum.map((v) => JSON.stringify(v));
  } else {
    if (f.type !== "json") s.type = f.type;
    if (f.enum) s.enum = f.enum;
    if (f.minimum !== undefined) s.minimum = f.minimum;
  }
  const about = [
    f.description,
    text ? `the JSON text of a value of type ${f.type}` : undefined,
  ].filter(Boolean).join("; ");
  if (about) s.description = about;
  return s;
}

/**
 * The object schema of a signature's outputs.
 *
 * @param fields The output fields.
 * @param strict Whether it is for a strict response format.
 * @returns The schema.
 */
export function outputsSchema(
  fields: Record<string, SignatureField>,
  strict: boolean,
): JsonSchema {
  const names = Object.keys(fields);
  return {
    type: "object",
    properties: Object.fromEntries(
      names.map((n) => [n, fieldSchema(fields[n], strict)]),
    ),
    required: names,
    additionalProperties: false,
  };
}

/** What {@linkcode decodeOutputs} decodes an answer against. */
export interface OutputsDecoding {
  /** The leaf's signature. */
  signature: Signature;
  /** Model id, for messages. */
  model: string;
}

/**
 * Parse a structured answer to a signature's outputs: the JSON object,
 * with JSON-text fields decoded.
 *
 * @param content The answer's text.
 * @param against The leaf's signature and the model id.
 * @returns The outputs.
 * @throws {ModelResponseError} Not a JSON object, or a JSON-text field that
 *   does not parse.
 */
export function decodeOutputs(
  content: string,
  against: OutputsDecoding,
): Record<string, unknown> {
  const { signature, model } = against;
  let v: unknown;
  try {
    v = JSON.parse(content);
  } catch (err) {
    throw new ModelResponseError(
      `${model} answered ${signature.id} with text that is not JSON (${
        (err as Error).message
      })`,
      { excerpt: content, cause: err },
    );
  }
  if (!isObject(v)) {
    throw new ModelResponseError(
      `${model} answered ${signature.id} with JSON that is not an object`,
      { excerpt: content },
    );
  }
  const out: Record<string, unknown> = { ...v };
  for (const [name, f] of Object.entries(signature.outputs)) {
    if (!asText(f) || typeof out[name] !== "string") continue;
    try {
      out[name] = JSON.parse(out[name] as string);
    } catch (err) {
      throw new ModelResponseError(
        `${model} answered ${signature.id}.${name} (${f.type}) with text that is not JSON (${
          (err as Error).message
        })`,
        { excerpt: out[name] as string, cause: err },
      );
    }
  }
  return out;
}
