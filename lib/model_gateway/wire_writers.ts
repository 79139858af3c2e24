/**
 * What the gateway writes on each wire when it serves a package: the
 * request's tools narrowed, the request asked again with refusals as the
 * refused tools' answers, and answers of its own (tool calls, or words) in
 * the shape the client asked for, whole or streamed: the shapes and the
 * helpers the three wires share (each wire's writer is its own file; the
 * wires are in `wires/registry.ts`).
 *
 * @module
 */
import type { Narrowing, Refusal } from "./serving.ts";
import {
  isObject,
  type NormResponse,
  type NormToolCall,
} from "./wire_types.ts";

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** An answer the gateway makes itself. */
export interface OwnAnswer {
  /** Words, or empty. */
  text: string;
  /** Tool calls (ids are made here when absent). */
  calls: { id?: string; name: string; arguments: Record<string, unknown> }[];
  /** The model the request named. */
  model: string | null;
}

/** The bytes of an answer and its content type. */
export interface WrittenAnswer {
  /** Body bytes. */
  body: Uint8Array;
  /** `application/json` or `text/event-stream`. */
  contentType: string;
}

/** A wire's writers. */
export interface WireWriter {
  /**
   * The request body with its tools narrowed.
   *
   * @param body The body as sent.
   * @param n The narrowing.
   * @returns A new body.
   */
  withTools(body: Obj, n: Narrowing): Obj;
  /**
   * The request asked again: the model's refused answer, then each of its
   * calls answered (refused ones with the reason, the others not made).
   *
   * @param body The body last sent.
   * @param answer The model's answer.
   * @param refusals The refused calls.
   * @returns A new body.
   */
  withRefusals(body: Obj, answer: NormResponse, refusals: Refusal[]): Obj;
  /**
   * An answer of the gateway's own.
   *
   * @param a What it says.
   * @param options Streamed or whole; usage in the stream (chat's `include_usage`).
   * @returns Its bytes.
   */
  answer(
    a: OwnAnswer,
    options: { stream: boolean; usage: boolean },
  ): WrittenAnswer;
}

/** UTF-8 encoder. */
export const enc = new TextEncoder();
/** A whole JSON answer. */
export const json = (v: unknown): WrittenAnswer => ({
  body: enc.encode(JSON.stringify(v)),
  contentType: "application/json",
});
/** A server-sent-events answer: `event:` (when named) and `data:` per event. */
export const sse = (events: [string | null, unknown][]): WrittenAnswer => ({
  body: enc.encode(
    events.map(([e, d]) =>
      `${e ? `event: ${e}\n` : ""}data: ${
        typeof d === "string" ? d : JSON.stringify(d)
      }\n\n`
    ).join(""),
  ),
  contentType: "text/event-stream; charset=utf-8",
});

/** A short random id part. */
export function uid(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 24);
}

/** What each call of a refused answer is told. */
export function refusalTexts(
  calls: NormToolCall[],
  refusals: Refusal[],
): Map<string, { text: string; refused: boolean }> {
  const byId = new Map(refusals.map((r) => [r.id, r]));
  const first = refusals[0];
  const out = new Map<string, { text: string; refused: boolean }>();
  for (const c of calls) {
    const r = byId.get(c.id);
    out.set(
      c.id,
      r
        ? {
          text:
            `Refused: ${r.reason}; choose values from the tool's schema, or tell the user what is missing`,
          refused: true,
        }
        : {
          text:
            `Not made: ${first.tool} in the same answer was refused first; call it again if you still need it`,
          refused: false,
        },
    );
  }
  return out;
}

/** The answer's calls, each with an id (made here when absent). */
export const callsWithIds = (a: OwnAnswer, prefix: string) =>
  a.calls.map((c) => ({ ...c, id: c.id ?? `${prefix}${uid()}` }));

/**
 * A body's `tools` with a narrowing applied: hidden tools left out, the
 * narrowed ones given their schema, the rest as they were.
 */
export function narrowTools(
  body: Obj,
  { n, nameOf, withSchema }: {
    n: Narrowing;
    nameOf: (t: Obj) => string | null;
    withSchema: (t: Obj, schema: unknown) => Obj;
  },
): Obj {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return {
    ...body,
    tools: tools.flatMap((t) => {
      const name = isObject(t) ? nameOf(t) : null;
      if (name === null) return [t];
      if (n.hidden.includes(name)) return [];
      return name in n.schemas ? [withSchema(t as Obj, n.schemas[name])] : [t];
    }),
  };
}

/** A tool's top-level `name`. */
export const nameField = (t: Obj) => typeof t.name === "string" ? t.name : null;
