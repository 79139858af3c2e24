/**
 * The gateway writing the Gemini API (serving a compiled package): the
 * request's `functionDeclarations` narrowed, the request asked again with
 * the refusals as the refused calls' `functionResponse`s, and answers of
 * its own, whole (a `GenerateContentResponse`) or streamed (one SSE event,
 * `data: …\r\n\r\n`, as the API ends its events). Its calls carry ids
 * (`functionCall.id`), which Gemini CLI and the SDK send back in their
 * `functionResponse`s (the gateway reads calls by their place all the
 * same: `call_ids.ts`); usage is zero. A request asked again carries the
 * model's turn and the refusals without ids: responses pair with calls by
 * order and name.
 *
 * @module
 */
import { isObject, type NormResponse } from "../../wire_types.ts";
import {
  callsWithIds,
  enc,
  refusalTexts,
  uid,
  type WrittenAnswer,
} from "../../wire_writers.ts";
import type { WireWriter } from "../../wire_writers.ts";

type Obj = Record<string, unknown>;

/** The model turn of an answer, as the client sends it back. */
function modelTurn(answer: NormResponse): Obj {
  return {
    role: "model",
    parts: [
      ...(answer.text ? [{ text: answer.text }] : []),
      ...answer.tool_calls.map((c) => ({
        functionCall: { name: c.name, args: c.arguments },
      })),
    ],
  };
}

/** Gemini, written by the gateway. */
export const geminiWriter: WireWriter = {
  withTools(body, n) {
    const tools = Array.isArray(body.tools) ? body.tools : [];
    return {
      ...body,
      tools: tools.flatMap((t) => {
        if (!isObject(t) || !Array.isArray(t.functionDeclarations)) return [t];
        const decls = t.functionDeclarations.flatMap((d) => {
          const name = isObject(d) && typeof d.name === "string"
            ? d.name
            : null;
          if (name === null) return [d];
          if (n.hidden.includes(name)) return [];
          if (!(name in n.schemas)) return [d];
          // A narrowed schema is JSON Schema: `parametersJsonSchema`
          // (the API refuses both it and `parameters`).
          const { parameters: _, ...rest } = d as Obj;
          return [{ ...rest, parametersJsonSchema: n.schemas[name] }];
        });
        return decls.length > 0 || t.functionDeclarations.length === 0
          ? [{ ...t, functionDeclarations: decls }]
          : [];
      }),
    };
  },
  withRefusals(body, answer, refusals) {
    const texts = refusalTexts(answer.tool_calls, refusals);
    const history = Array.isArray(body.contents) ? body.contents : [];
    return {
      ...body,
      contents: [
        ...history,
        modelTurn(answer),
        {
          role: "user",
          parts: answer.tool_calls.map((c) => ({
            functionResponse: {
              name: c.name,
              response: { error: texts.get(c.id)!.text },
            },
          })),
        },
      ],
    };
  },
  answer(a, { stream }): WrittenAnswer {
    const calls = callsWithIds(a, "harness_");
    const body = {
      candidates: [{
        content: {
          role: "model",
          parts: [
            ...(a.text ? [{ text: a.text }] : []),
            ...calls.map((c) => ({
              functionCall: { id: c.id, name: c.name, args: c.arguments },
            })),
          ],
        },
        finishReason: "STOP",
        index: 0,
      }],
      usageMetadata: {
        promptTokenCount: 0,
        candidatesTokenCount: 0,
        totalTokenCount: 0,
      },
      modelVersion: a.model ?? "harness-package",
      responseId: `harness_${uid()}`,
    };
    return stream
      ? {
        body: enc.encode(`data: ${JSON.stringify(body)}\r\n\r\n`),
        contentType: "text/event-stream",
      }
      : {
        body: enc.encode(JSON.stringify(body)),
        contentType: "application/json; charset=UTF-8",
      };
  },
};
