/**
 * Test helper: a scripted OpenAI Responses model on loopback for a real
 * OpenCode session (`opencode run`, provider `openai`), streamed as the API
 * streams. It plays one fixed policy from what OpenCode sends back, so a
 * session holds each case the gateway and the plugin must agree on:
 *
 * 1. a text and a `read` of `notes.txt` (a normal call);
 * 2. `bash` `ls missing-dir` (the command fails: exit 2);
 * 3. a `read` of `missing.txt` (the tool throws: no such file);
 * 4. `bash` `rm notes.txt` (a permission rule denies it);
 * 5. a final text.
 *
 * A request that offers no tools is OpenCode's title call (its small
 * model): it gets a title. Usage is counted from the bytes (a quarter of
 * the request body's, of the answer's), so each call has its own figures.
 * The policy's step is the number of tool results in the request.
 *
 * @module
 */

/** The scripted server. */
export interface OpencodeModel {
  /** Base URL (`…/v1`). */
  url: string;
  /** Every request body received, in order (parsed). */
  requests: Record<string, unknown>[];
  /** The answers sent (the response objects of `response.completed`). */
  answers: Record<string, unknown>[];
  /** Each exchange as it came and went (for a recording). */
  exchanges: ModelExchange[];
  /** Stop the server. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** One exchange as the scripted model saw it. */
export interface ModelExchange {
  /** When the request arrived (ms since the epoch, sub-millisecond). */
  t: number;
  /** Request path. */
  path: string;
  /** Request headers (`authorization` left out). */
  headers: Record<string, string>;
  /** The request body as it came. */
  body: string;
  /** The answer's status. */
  status: number;
  /** The answer's server-sent events, as sent. */
  sse: string;
}

/** The prompt the session is run with. */
export const OPENCODE_PROMPT =
  "Read notes.txt, then check what else is in this folder.";

/** The title the scripted small model gives. */
export const OPENCODE_TITLE = "Scripted gateway session";

/** What a scripted answer holds. */
export interface ScriptedAnswer {
  /** Text before the calls. */
  text?: string;
  /** One tool call. */
  call?: { name: string; arguments: Record<string, unknown> };
}

/**
 * The policy's answer to a request.
 *
 * @param body The request body.
 * @param cwd The session's working folder (the model reads files by path).
 * @returns The answer.
 */
export function scriptedAnswer(
  body: Record<string, unknown>,
  cwd: string,
): ScriptedAnswer {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (tools.length === 0) return { text: OPENCODE_TITLE };
  const input = Array.isArray(body.input) ? body.input : [];
  const step =
    input.filter((i) =>
      (i as { type?: string })?.type === "function_call_output"
    ).length;
  switch (step) {
    case 0:
      return {
        text: "Reading the notes first.",
        call: { name: "read", arguments: { filePath: `${cwd}/notes.txt` } },
      };
    case 1:
      return {
        call: {
          name: "bash",
          arguments: {
            command: "ls missing-dir",
            description: "List a folder that does not exist",
          },
        },
      };
    case 2:
      return {
        call: { name: "read", arguments: { filePath: `${cwd}/missing.txt` } },
      };
    case 3:
      return {
        call: {
          name: "bash",
          arguments: {
            command: "rm notes.txt",
            description: "Delete the notes (a deny rule)",
          },
        },
      };
    default:
      return {
        text:
          "The notes say the release is on Friday. The listing failed, missing.txt does not exist, and deleting the notes was denied.",
      };
  }
}

const tokens = (chars: number) => Math.max(1, Math.ceil(chars / 4));

/**
 * The answer as the Responses API's events (`event:` and `data:` lines).
 *
 * @param a The answer.
 * @param o Response number, model, request size.
 * @returns The SSE text and the completed response object.
 */
export function responsesStream(
  a: ScriptedAnswer,
  o: { n: number; model: string; requestBytes: number },
): { sse: string; response: Record<string, unknown> } {
  const id = `resp_oc${o.n}`;
  const items: Record<string, unknown>[] = [];
  if (a.text) {
    items.push({
      id: `msg_oc${o.n}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{
        type: "output_text",
        text: a.text,
        annotations: [],
        logprobs: [],
      }],
    });
  }
  if (a.call) {
    items.push({
      id: `fc_oc${o.n}`,
      type: "function_call",
      status: "completed",
      arguments: JSON.stringify(a.call.arguments),
      call_id: `call_oc${o.n}`,
      name: a.call.name,
    });
  }
  const output = tokens(
    (a.text ?? "").length + (a.call ? JSON.stringify(a.call).length : 0),
  );
  const input = tokens(o.requestBytes);
  const base = {
    id,
    object: "response",
    created_at: 1795314991,
    model: o.model,
    error: null,
    incomplete_details: null,
    parallel_tool_calls: true,
    store: false,
    tool_choice: "auto",
    tools: [],
    metadata: {},
  };
  const done = {
    ...base,
    status: "completed",
    output: items,
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + output,
    },
  };
  let seq = 0;
  let sse = "";
  const emit = (type: string, fields: Record<string, unknown>) => {
    sse += `event: ${type}\ndata: ${
      JSON.stringify({ type, sequence_number: seq++, ...fields })
    }\n\n`;
  };
  const pending = { ...base, status: "in_progress", output: [], usage: null };
  emit("response.created", { response: pending });
  emit("response.in_progress", { response: pending });
  items.forEach((item, output_index) => {
    const item_id = item.id as string;
    if (item.type === "message") {
      const text = a.text!;
      emit("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      const at = { item_id, output_index, content_index: 0 };
      const part = { type: "output_text", annotations: [], logprobs: [] };
      emit("response.content_part.added", {
        ...at,
        part: { ...part, text: "" },
      });
      for (let i = 0; i < text.length; i += 24) {
        emit("response.output_text.delta", {
          ...at,
          delta: text.slice(i, i + 24),
          logprobs: [],
        });
      }
      emit("response.output_text.done", { ...at, text, logprobs: [] });
      emit("response.content_part.done", { ...at, part: { ...part, text } });
    } else {
      const args = item.arguments as string;
      emit("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      emit("response.function_call_arguments.delta", {
        item_id,
        output_index,
        delta: args,
      });
      emit("response.function_call_arguments.done", {
        item_id,
        output_index,
        name: item.name,
        arguments: args,
      });
    }
    emit("response.output_item.done", { output_index, item });
  });
  emit("response.completed", { response: done });
  return { sse, response: done };
}

/**
 * Start the scripted model.
 *
 * @param cwd The session's working folder.
 * @returns The running server.
 */
export function startOpencodeModel(cwd: string): OpencodeModel {
  const requests: Record<string, unknown>[] = [];
  const answers: Record<string, unknown>[] = [];
  const exchanges: ModelExchange[] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, async (req) => {
    const t = performance.timeOrigin + performance.now();
    const path = new URL(req.url).pathname;
    const text = await req.text();
    if (req.method !== "POST" || path !== "/v1/responses") {
      return Response.json({ error: { message: `no route ${path}` } }, {
        status: 404,
      });
    }
    const body = JSON.parse(text) as Record<string, unknown>;
    requests.push(body);
    const n = requests.length;
    const { sse, response } = responsesStream(scriptedAnswer(body, cwd), {
      n,
      model: typeof body.model === "string" ? body.model : "fake-model",
      requestBytes: new TextEncoder().encode(text).length,
    });
    answers.push(response);
    const headers: Record<string, string> = {};
    for (const [k, v] of req.headers) {
      if (k !== "authorization") headers[k] = v;
    }
    exchanges.push({ t, path, headers, body: text, status: 200, sse });
    return new Response(sse, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "x-request-id": `req_oc${n}`,
      },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    requests,
    answers,
    exchanges,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
