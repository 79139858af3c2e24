import { assertEquals, assertOk } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { Conversation } from "../../lib/forms/agent/conversation.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import {
  type DeclaredTool,
  declareTool,
} from "../../lib/tool_gateway/parameters.ts";
import type {
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatToolCall,
} from "../../lib/models/chat_types.ts";
import type { UnsealedEvent } from "../../lib/trace/event.ts";

const slice = loadTauData(
  Deno.readTextFileSync(
    new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
  ),
);
const pkg = compileBehavior(
  slice.episodes.filter((e) => e.norm.success === true).map((e) => e.norm),
  { name: "retail", effects: slice.effects },
).package;

/** A model API stand-in: answers from a queue, keeps every request. */
class QueueModel implements ChatModel {
  readonly id = "test/queue";
  readonly requests: ChatRequest[] = [];
  constructor(readonly answers: Partial<ChatResponse>[]) {}
  complete(request: ChatRequest): Promise<ChatResponse> {
    this.requests.push(structuredClone({ ...request, signal: undefined }));
    const a = this.answers.shift() ?? { content: "(no more answers)" };
    return Promise.resolve({
      content: null,
      tool_calls: [],
      finish_reason: a.tool_calls?.length ? "tool_calls" : "stop",
      refusal: null,
      usage: { prompt_tokens: 100, completion_tokens: 10 },
      model: "queue",
      ...a,
    });
  }
}

function call(
  name: string,
  args: Record<string, unknown> | null,
  raw?: string,
): ChatToolCall {
  return {
    id: `c_${name}_${Math.random().toString(36).slice(2, 8)}`,
    name,
    arguments: args,
    raw_arguments: raw ?? JSON.stringify(args),
    ...(args === null ? { arguments_error: "Unexpected token" } : {}),
  };
}

function retailTools(called: string[]) {
  const orders: Record<string, Record<string, unknown>> = {
    "#W10": { order_id: "#W10", status: "pending", items: [] },
    "#W11": { order_id: "#W11", status: "delivered", items: [] },
  };
  const tools: Record<string, DeclaredTool> = {};
  for (const t of Object.keys(pkg.manifest.effects)) {
    tools[t] = declareTool((a: Record<string, unknown>) => {
      called.push(`${t} ${canonicalJson(a)}`);
      if (t === "find_user_id_by_email") {
        if (a.email === "ana.lima1234@example.com") return "ana_lima_1";
        throw new Error("user not found");
      }
      if (t === "get_user_details") {
        return { user_id: "ana_lima_1", orders: ["#W10", "#W11"] };
      }
      if (t === "get_order_details") {
        const o = orders[a.order_id as string];
        if (!o) throw new Error("order not found");
        return o;
      }
      if (t === "cancel_pending_order") {
        orders[a.order_id as string].status = "cancelled";
        return orders[a.order_id as string];
      }
      return {};
    }, "object");
  }
  return { tools, orders };
}

const HELLO = "Hi! My email is ana.lima1234@example.com, please cancel W10.";

Deno.test("Conversation shows the package's lookups as the model's own calls and serves a repeated read without calling", async () => {
  const called: string[] = [];
  const { tools } = retailTools(called);
  const model = new QueueModel([
    { tool_calls: [call("get_user_details", { user_id: "ana_lima_1" })] },
    { content: "Your orders are #W10 and #W11." },
  ]);
  const conv = new Conversation(pkg, { tools }, { model });
  const turn = await conv.user(HELLO);
  assertEquals(turn.status, "replied");
  assertEquals(turn.reply, "Your orders are #W10 and #W11.");
  const first = model.requests[0].messages;
  const shown = first.filter((m) => m.role === "tool").map((m) =>
    (m as { name: string }).name
  );
  assertOk(shown.includes("get_user_details"), JSON.stringify(first));
  assertOk(shown.includes("find_user_id_by_email"));
  assertEquals(
    called.filter((c) => c.startsWith("get_user_details")).length,
    1,
    "the model's read was served from the lookup",
  );
  assertEquals(conv.stats.served, 1);
  assertEquals(conv.stats.model_requests, 2);
  assertEquals(conv.stats.prompt_tokens, 200);
});

Deno.test("Conversation offers a state-changing tool with its arguments narrowed to the candidates (named, where the user may also write the value), and refuses another value without calling", async () => {
  const called: string[] = [];
  const { tools, orders } = retailTools(called);
  const model = new QueueModel([
    {
      tool_calls: [call("cancel_pending_order", {
        order_id: "#W99",
        reason: "no longer needed",
      })],
    },
    {
      tool_calls: [call("cancel_pending_order", {
        order_id: "#W10",
        reason: "no longer needed",
      })],
    },
    { content: "Cancelled." },
  ]);
  const conv = new Conversation(pkg, { tools }, { model });
  const turn = await conv.user(HELLO);
  assertEquals(turn.reply, "Cancelled.");
  const offered = model.requests[0].tools!.find((t) =>
    t.name === "cancel_pending_order"
  )!;
  const orderId = (offered.parameters.properties as Record<
    string,
    { enum?: unknown[]; description?: string }
  >).order_id;
  // Users type order numbers in training, so the value may also be one the
  // user wrote: no closed enum, the candidates named in the description.
  assertEquals(orderId.enum, undefined);
  assertOk(
    orderId.description?.includes(
      "text the user wrote, or one of #W10, #W11",
    ),
    orderId.description,
  );
  const refusal = model.requests[1].messages.at(-1)!;
  assertEquals(refusal.role, "tool");
  assertOk(
    (refusal as { content: string }).content.startsWith("Refused:"),
    JSON.stringify(refusal),
  );
  assertEquals(
    called.filter((c) => c.startsWith("cancel_pending_order")),
    ['cancel_pending_order {"order_id":"#W10","reason":"no longer needed"}'],
  );
  assertEquals(orders["#W10"].status, "cancelled");
  assertEquals(conv.stats.refused, 1);
  assertEquals(conv.stats.writes, 1);
});

Deno.test("Conversation refuses arguments that are not JSON and tools it does not offer, and stops after too many refusals", async () => {
  const called: string[] = [];
  const { tools } = retailTools(called);
  const model = new QueueModel([
    { tool_calls: [call("cancel_pending_order", null, "{order_id: W10")] },
    { tool_calls: [call("delete_everything", {})] },
    { tool_calls: [call("cancel_pending_order", { order_id: "#W12" })] },
    { tool_calls: [call("cancel_pending_order", { order_id: "#W13" })] },
  ]);
  const conv = new Conversation(pkg, { tools }, {
    model,
    maxRefusalsPerTurn: 3,
  });
  const turn = await conv.user(HELLO);
  assertEquals(turn.status, "stopped");
  assertOk(/refused 4 times/.test(turn.reason ?? ""), turn.reason ?? "");
  assertEquals(called.filter((c) => c.startsWith("cancel")).length, 0);
  const notJson = model.requests[1].messages.at(-1) as { content: string };
  assertOk(/not a JSON object/.test(notJson.content), notJson.content);
  const unknown = model.requests[2].messages.at(-1) as { content: string };
  assertOk(/not a tool offered here/.test(unknown.content), unknown.content);
});

Deno.test("Conversation without a package is the plain agent: every tool offered, every call made as asked, traced with token usage", async () => {
  const called: string[] = [];
  const { tools } = retailTools(called);
  const model = new QueueModel([
    {
      tool_calls: [
        call("find_user_id_by_email", { email: "ana.lima1234@example.com" }),
      ],
    },
    {
      tool_calls: [call("cancel_pending_order", {
        order_id: "#W10",
        reason: "ordered by mistake",
      })],
    },
    { content: "Done." },
  ]);
  const events: UnsealedEvent[] = [];
  const conv = new Conversation(null, { tools }, {
    model,
    sink: { emit: (e: UnsealedEvent) => void events.push(e) },
  });
  await conv.user(HELLO);
  conv.finish({ success: true });
  assertEquals(
    model.requests[0].tools!.map((t) => t.name).sort(),
    Object.keys(tools).sort(),
  );
  assertEquals(called.length, 2);
  assertEquals(conv.stats.lookups, 0);
  const kinds = events.map((e) => e.kind);
  assertEquals(kinds[0], "episode.started");
  assertEquals(kinds.at(-1), "episode.finished");
  assertEquals(kinds.filter((k) => k === "model.requested").length, 3);
  const responded = events.find((e) => e.kind === "model.responded")!;
  assertEquals(
    (responded.payload.response as { usage: unknown }).usage,
    { input_tokens: 100, output_tokens: 10, total_tokens: 110 },
  );
  assertEquals(kinds.filter((k) => k === "tool.call.completed").length, 2);
});
