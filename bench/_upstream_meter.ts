/**
 * A meter in front of the scripted upstreams: it forwards each request as
 * it came (`/s/<id>/v1/chat/completions` to the OpenAI scripted server,
 * `/s/<id>/v1/messages` to the Anthropic front; the answer streams back
 * as it comes; the OpenAI scripted server answers whole, so a streamed
 * Chat Completions request is asked whole and its answer sent back as
 * chunks) and splits the prompt the upstream counts into the parts
 * that explain a package's cost, with the same tokenizer and framing
 * (`TokenCounter`) over the Chat Completions shape:
 *
 * - `tools`: the tool definitions as sent (the gateway narrows them);
 * - `served`: the lookups the package answered, as the agent shows them
 *   again (assistant messages whose calls the scripted model did not make,
 *   and their results).
 *
 * @module
 */
import { TokenCounter, type WireMessage } from "../eval/token_count.ts";
import { chatShapeOf } from "./_scripted_anthropic.ts";

/** What the meter counted for one script id. */
export interface MeterStats {
  /** Requests forwarded. */
  requests: number;
  /** Tokens of the tool definitions sent. */
  tools: number;
  /** Tokens of the package's lookups shown again (calls and results). */
  served: number;
}

/** A running meter. */
export interface UpstreamMeter {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /**
   * Counts of a script id so far (zeros when none).
   *
   * @param id Script id.
   * @returns The counts.
   */
  stats(id: string): MeterStats;
  /** Stop listening. */
  close(): Promise<void>;
  /** Same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

type Obj = Record<string, unknown>;

/**
 * A streamed Chat Completions request asked whole, and its whole answer as
 * the chunks a streaming upstream sends (role, text, each call, the finish
 * reason, usage when asked, `[DONE]`). Null when the request is not a
 * streamed one.
 */
function chatStream(
  text: string,
): { whole: string; sse(answer: Obj): string } | null {
  let body: Obj;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (body?.stream !== true) return null;
  const usage = (body.stream_options as Obj | undefined)?.include_usage ===
    true;
  const { stream: _s, stream_options: _o, ...rest } = body;
  return {
    whole: JSON.stringify(rest),
    sse(answer) {
      const choice = (answer.choices as Obj[])[0];
      const m = choice.message as Obj;
      const base = {
        id: answer.id,
        object: "chat.completion.chunk",
        created: answer.created,
        model: answer.model,
      };
      const chunk = (delta: Obj, finish: unknown = null) =>
        `data: ${
          JSON.stringify({
            ...base,
            choices: [{ index: 0, delta, finish_reason: finish }],
          })
        }\n\n`;
      let out = chunk({ role: "assistant", content: "" });
      if (typeof m.content === "string" && m.content !== "") {
        out += chunk({ content: m.content });
      }
      ((m.tool_calls ?? []) as Obj[]).forEach((c, index) => {
        out += chunk({ tool_calls: [{ index, ...c }] });
      });
      out += chunk({}, choice.finish_reason);
      if (usage) {
        out += `data: ${
          JSON.stringify({ ...base, choices: [], usage: answer.usage })
        }\n\n`;
      }
      return out + "data: [DONE]\n\n";
    },
  };
}

/** The scripted model's own call ids (`ScriptWalker`'s default prefix). */
const SCRIPTED_ID = "call_scripted_";

const ROUTE = /^\/s\/([^/]+)\/v1\/(chat\/completions|messages)\/?$/;

/**
 * Start a meter on 127.0.0.1.
 *
 * @param targets Origins of the OpenAI scripted server and the Anthropic front.
 * @returns The running meter.
 */
export function startUpstreamMeter(
  targets: { openai: string; anthropic: string },
): UpstreamMeter {
  const counter = new TokenCounter();
  const counts = new Map<string, MeterStats>();

  function meter(id: string, messages: WireMessage[], tools: unknown[]) {
    const s = counts.get(id) ?? { requests: 0, tools: 0, served: 0 };
    counts.set(id, s);
    s.requests++;
    if (tools.length) s.tools += counter.text(JSON.stringify(tools));
    const served = new Set<string>();
    for (const m of messages) {
      const calls = m.tool_calls ?? [];
      const ours = calls.length > 0 &&
        calls.every((c) => !(c.id ?? "").startsWith(SCRIPTED_ID));
      if (ours) { for (const c of calls) served.add(c.id ?? ""); }
      if (ours || (m.role === "tool" && served.has(m.tool_call_id ?? ""))) {
        // One message's framing, role, text and calls, without the priming.
        s.served += counter.prompt({ messages: [m] }) - 3;
      }
    }
  }

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const match = ROUTE.exec(url.pathname);
    const text = await req.text();
    if (match) {
      try {
        const body = JSON.parse(text);
        const id = decodeURIComponent(match[1]);
        if (match[2] === "messages") {
          const chat = chatShapeOf(body);
          meter(id, chat.messages, chat.tools);
        } else {
          meter(id, body.messages ?? [], body.tools ?? []);
        }
      } catch {
        // Not ours to judge: the upstream answers it.
      }
    }
    const target = match?.[2] === "messages"
      ? targets.anthropic
      : targets.openai;
    const headers = new Headers(req.headers);
    headers.delete("content-length");
    headers.delete("host");
    // The OpenAI scripted server answers whole: a streamed request is
    // asked whole and its answer streamed as Chat Completions chunks.
    const streamed = match?.[2] === "chat/completions"
      ? chatStream(text)
      : null;
    const res = await fetch(`${target}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: req.method === "GET" ? null : streamed?.whole ?? text,
    });
    if (streamed && res.status === 200) {
      return new Response(streamed.sse(await res.json()), {
        headers: { "content-type": "text/event-stream; charset=utf-8" },
      });
    }
    const back = new Headers(res.headers);
    // fetch has decoded the body already.
    back.delete("content-encoding");
    back.delete("content-length");
    return new Response(res.body, { status: res.status, headers: back });
  }

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    handle,
  );
  let closed: Promise<void> | null = null;
  const close = () => closed ??= server.shutdown();
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    stats: (id) => ({
      ...(counts.get(id) ?? { requests: 0, tools: 0, served: 0 }),
    }),
    close,
    [Symbol.asyncDispose]: close,
  };
}
