/**
 * The scripted model of the lab's `dataflow` scenario, behind the Anthropic
 * Messages API on loopback (streamed as the API streams, through
 * `messageStream` of the Claude Code test helpers). It plays the
 * scenario's policy from the tool results Claude Code actually sends back:
 * the next order from the queue grep, customer/amount/currency from the
 * Read, the balance from the ledger grep, `covered` when the balance is at
 * least the amount else `insufficient`, and the recorded session's texts.
 * A request that is not the scenario's (a host utility call) gets a short
 * text. Used by `tools/record_dataflow.ts`; no test runs it.
 *
 * @module
 */
import { messageStream } from "../tests/model_gateway/_claude_code.ts";

/** The scenario's prompt, as the shared recording has it. */
export const DATAFLOW_PROMPT =
  "Lab scenario dataflow: take the next pending order from queue.txt, look it up, check the customer's ledger balance and write a summary report.";

type Block = Record<string, unknown>;
type Message = { role: string; content: string | Block[] };

/** What the model answers: content blocks (text, tool_use). */
export type Answer = Block[];

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => typeof b?.text === "string" ? b.text as string : "")
    .join("");
}

/** The tool results of a request, oldest first, as the model saw them. */
function toolResults(messages: Message[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role !== "user" || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === "tool_result") out.push(textOf(b.content));
    }
  }
  return out;
}

/** The Read tool's numbered lines (`1\t…`) back to the file's text. */
function unnumbered(text: string): string {
  return text.split("\n").map((l) => l.replace(/^\s*\d+\t/, "")).join("\n");
}

/** An id of the API's form (`toolu_01…`, `msg_01…`), the same on every run. */
function apiId(prefix: string, seed: string, step: number): string {
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let h = 2166136261;
  for (const c of `${prefix}${seed}#${step}`) {
    h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  }
  let id = `${prefix}_01`;
  for (let i = 0; i < 22; i++) {
    h = Math.imul(h ^ (h >>> 13), 2246822507) >>> 0;
    id += abc[h % abc.length];
  }
  return id;
}

function call(
  seed: string,
  step: number,
  name: string,
  input: Record<string, string>,
): Block {
  return { type: "tool_use", id: apiId("toolu", seed, step), name, input };
}

/**
 * The scenario's next answer for a request's messages.
 *
 * @param options The request's messages and the working directory the
 *   host named in its system prompt.
 * @returns The answer's blocks, or null when the request is not the
 *   scenario's.
 * @throws {SyntaxError} When a tool result is not what the scenario's files
 *   give (the recording is then wrong: look at the workspace).
 */
export function dataflowAnswer(
  options: { messages: Message[]; cwd: string },
): Answer | null {
  const { messages, cwd } = options;
  if (
    !messages.length || !textOf(messages[0].content).includes(DATAFLOW_PROMPT)
  ) {
    return null;
  }
  const results = toolResults(messages);
  const step = results.length;
  // The working folder's name, not its path: a scratch path is new each run.
  const seed = cwd.slice(cwd.lastIndexOf("/") + 1);
  if (step === 0) {
    return [
      { type: "text", text: "Let me see which order is next." },
      call(seed, 0, "Bash", {
        command: "grep '^next:' queue.txt",
        description: "Find the next pending order",
      }),
    ];
  }
  const order = /^next:\s*(\S+)/m.exec(results[0])?.[1];
  if (!order) throw new SyntaxError(`No next order in "${results[0]}"`);
  if (step === 1) {
    return [
      { type: "text", text: `The next order is ${order}; reading it.` },
      call(seed, 1, "Read", { file_path: `${cwd}/orders/${order}.json` }),
    ];
  }
  const o = JSON.parse(unnumbered(results[1])) as Record<string, string>;
  if (step === 2) {
    return [call(seed, 2, "Bash", {
      command: `grep '^${o.customer},' ledger.csv`,
      description: `Look up customer ${o.customer} in the ledger`,
    })];
  }
  const balance = results[2].trim().split(",")[1];
  if (balance === undefined) {
    throw new SyntaxError(`No balance in "${results[2]}"`);
  }
  const status = Number(balance) >= Number(o.amount)
    ? "covered"
    : "insufficient";
  if (step === 3) {
    return [call(seed, 3, "Write", {
      file_path: `${cwd}/reports/${order}.txt`,
      content:
        `order ${order}\ncustomer ${o.customer}\namount ${o.amount} ${o.currency}\nbalance ${balance}\nstatus: ${status}\n`,
    })];
  }
  return [{
    type: "text",
    text:
      `Wrote reports/${order}.txt: order ${order} for customer ${o.customer}, ${o.amount} ${o.currency} against a balance of ${balance}: ${status}.`,
  }];
}

/** A running scripted model. */
export interface DataflowModel {
  /** Its base URL (`ANTHROPIC_BASE_URL`). */
  url: string;
  /** Every request body it received, in order. */
  requests: unknown[];
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Serve the scripted model on a free loopback port.
 *
 * @returns The server.
 */
export function startDataflowModel(): DataflowModel {
  const requests: unknown[] = [];
  let n = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || !path.endsWith("/v1/messages")) {
        await req.body?.cancel();
        return Response.json({
          type: "error",
          error: { type: "not_found_error", message: `No route ${path}` },
        }, { status: 404 });
      }
      const body = await req.json();
      requests.push(body);
      // The host names its working directory in its environment text
      // (the system prompt or a message, by version).
      const cwd = /Primary working directory: ([^\\"\s]+)/.exec(
        JSON.stringify(body),
      )?.[1] ?? "";
      const blocks = dataflowAnswer({ messages: body.messages, cwd }) ??
        [{ type: "text", text: "OK." }];
      const usage = { input_tokens: 100, output_tokens: 20 };
      n++;
      // Each answer its own message id, as the API gives (the host's
      // transcript keeps the records of one message under one id).
      const id = apiId("msg", cwd.slice(cwd.lastIndexOf("/") + 1), n);
      if (body.stream !== true) {
        return Response.json({
          id,
          type: "message",
          role: "assistant",
          model: body.model,
          content: blocks,
          stop_reason: blocks.some((b) => b.type === "tool_use")
            ? "tool_use"
            : "end_turn",
          stop_sequence: null,
          usage,
        });
      }
      const stream = messageStream(blocks, usage)
        .replace('"id":"msg_rec"', `"id":"${id}"`);
      return new Response(stream, {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
