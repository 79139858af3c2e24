/**
 * Test helper: the recorded Claude Code model requests
 * (`fixtures/model_requests/host_a/`) and a local Anthropic upstream
 * that answers each one as the model did in the recording (the assistant
 * message the next request carries), streamed as the Messages API streams.
 *
 * @module
 */
/** The recorded requests, vendored (see fixtures/hosts/README.md). */
const DIR = new URL("../../fixtures/model_requests/host_a", import.meta.url)
  .pathname;

/** One recorded request body. */
export type RequestBody = {
  messages: { role: string; content: unknown }[];
  metadata: { user_id: string };
  [k: string]: unknown;
};

/**
 * The recorded requests of a scenario, in order.
 *
 * @param scenario `basic`, `compact` or `subagent`.
 * @returns The bodies.
 */
export function recordedRequests(scenario: string): RequestBody[] {
  const dir = `${DIR}/${scenario}`;
  return [...Deno.readDirSync(dir)]
    .map((e) => e.name)
    .filter((n) => n.endsWith(".json"))
    .sort()
    .map((n) => JSON.parse(Deno.readTextFileSync(`${dir}/${n}`)));
}

/**
 * Post a recorded request to the gateway as Claude Code sends it (its path,
 * an API key, the API version; no `x-harness-*` header).
 *
 * @param base The gateway's base URL.
 * @param body The request.
 * @returns The gateway's answer.
 */
export function postAsClaudeCode(
  base: string,
  body: RequestBody,
): Promise<Response> {
  return fetch(`${base}/v1/messages?beta=true`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "sk-ant-api03-test-key-never-stored-0123456789",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });
}

/** The session id Claude Code put in a request's `metadata.user_id`. */
export function sessionOf(body: RequestBody): string {
  return JSON.parse(body.metadata.user_id).session_id;
}

type Block = Record<string, unknown>;

function toolUseIds(body: RequestBody): Set<string> {
  const ids = new Set<string>();
  for (const m of body.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Block[]) {
      if (b.type === "tool_use") ids.add(b.id as string);
    }
  }
  return ids;
}

/**
 * What the model answered to request `k` in the recording: the first
 * assistant message of a later request of the same conversation holding a
 * call request `k` does not; else a text.
 *
 * @param bodies The scenario's requests.
 * @param k The request.
 * @returns The answer's content blocks.
 */
export function recordedAnswer(bodies: RequestBody[], k: number): Block[] {
  const known = toolUseIds(bodies[k]);
  const first = JSON.stringify(bodies[k].messages[0]);
  for (const later of bodies.slice(k + 1)) {
    if (JSON.stringify(later.messages[0]) !== first) continue;
    for (const m of later.messages) {
      if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
      const blocks = (m.content as Block[]).filter((b) =>
        b.type === "text" || b.type === "tool_use"
      );
      if (
        blocks.some((b) => b.type === "tool_use" && !known.has(b.id as string))
      ) {
        return blocks.map(({ cache_control: _, ...b }) => b);
      }
    }
    break;
  }
  return [{ type: "text", text: `Done (request ${k + 1}).` }];
}

/** Usage the upstream reports for request `k`. */
export function usageOf(
  k: number,
): { input_tokens: number; output_tokens: number } {
  return { input_tokens: 100 + k, output_tokens: 10 + k };
}

/**
 * The Messages API stream of one answer.
 *
 * @param blocks Content blocks.
 * @param usage Token usage.
 * @returns SSE text.
 */
export function messageStream(
  blocks: Block[],
  usage: { input_tokens: number; output_tokens: number },
): string {
  const ev = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let out = ev("message_start", {
    message: {
      id: "msg_rec",
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  blocks.forEach((b, index) => {
    if (b.type === "text") {
      out += ev("content_block_start", {
        index,
        content_block: { type: "text", text: "" },
      });
      out += ev("content_block_delta", {
        index,
        delta: { type: "text_delta", text: b.text },
      });
    } else {
      out += ev("content_block_start", {
        index,
        content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
      });
      const json = JSON.stringify(b.input);
      const half = Math.floor(json.length / 2);
      for (const part of [json.slice(0, half), json.slice(half)]) {
        out += ev("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json: part },
        });
      }
    }
    out += ev("content_block_stop", { index });
  });
  const calls = blocks.some((b) => b.type === "tool_use");
  out += ev("message_delta", {
    delta: {
      stop_reason: calls ? "tool_use" : "end_turn",
      stop_sequence: null,
    },
    usage: { output_tokens: usage.output_tokens },
  });
  return out + ev("message_stop", {});
}

/** A local upstream answering the recorded requests. */
export interface RecordedUpstream {
  /** Its base URL (Anthropic's SDK base URL: no `/v1`). */
  url: string;
  /** Paths (with query) and `x-api-key` headers it received. */
  received: { path: string; key: string | null }[];
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Start it: request `k` is the one whose body equals the scenario's
 * `k`-th (matched by its messages).
 *
 * @param bodies The scenario's requests.
 * @returns The upstream.
 */
export function startRecordedUpstream(bodies: RequestBody[]): RecordedUpstream {
  const index = new Map(bodies.map((b, k) => [JSON.stringify(b.messages), k]));
  const received: { path: string; key: string | null }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const u = new URL(req.url);
      received.push({
        path: u.pathname + u.search,
        key: req.headers.get("x-api-key"),
      });
      const body = await req.json();
      const k = index.get(JSON.stringify(body.messages));
      if (k === undefined) {
        return Response.json({
          type: "error",
          error: { type: "invalid_request_error", message: "unknown request" },
        }, { status: 400 });
      }
      return new Response(
        messageStream(recordedAnswer(bodies, k), usageOf(k)),
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
