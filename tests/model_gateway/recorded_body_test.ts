/**
 * A request's long fields are recorded once while they stay the same
 * (`recorded_body.ts`): Claude Code's tools and system prompt in the first
 * request of its session only, put back by `filledBody`; a field that
 * changes is recorded again, in full.
 */
import { assertEquals, assertOk as assert, assertThrows } from "../_assert.ts";
import { startServer } from "../_server.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import {
  filledBody,
  recordedBody,
  RecordedBodyError,
  REPEATED_FIELD_MIN_CHARS,
} from "../../lib/model_gateway/recorded_body.ts";
import {
  postAsClaudeCode,
  recordedRequests,
  type RequestBody,
  startRecordedUpstream,
} from "./_claude_code.ts";
import { chatJsonServer } from "../_chat_json_server.ts";

async function eventsOf(
  s: Awaited<ReturnType<typeof startServer>>,
): Promise<TraceEvent[]> {
  await s.server.modelGateway!.settled();
  const out: TraceEvent[] = [];
  for await (const ev of s.store.readEvents("default")) out.push(ev);
  return out;
}

/** A Chat Completions request as an SDK sends it (no `x-harness-*` header). */
function postChat(base: string, body: unknown): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer sk-test-0123456789abcdef",
    },
    body: JSON.stringify(body),
  });
}

/** A tool whose definition is long enough to be left out when repeated. */
function orderTool(name: string): unknown {
  return {
    type: "function",
    function: {
      name,
      description: `${name}: ${
        "looks the order up and says what it holds. ".repeat(8)
      }`,
      parameters: { type: "object", properties: { id: { type: "string" } } },
    },
  };
}

/**
 * A gateway whose OpenAI upstream answers every chat the same, and the
 * conversation's opening message.
 */
async function chatGateway() {
  const up = chatJsonServer(() => ({ ok: true }), "chatcmpl-1");
  const s = await startServer({
    modelGateway: { upstreamOpenai: up.url.replace(/\/v1$/, "") },
  });
  return {
    s,
    messages: [
      { role: "system", content: "You help with orders." },
    ] as unknown[],
    async [Symbol.asyncDispose]() {
      await s[Symbol.asyncDispose]();
      await up.shutdown();
    },
  };
}

function requestOf(ev: TraceEvent): Record<string, unknown> {
  return ev.payload.request as Record<string, unknown>;
}

Deno.test("Claude Code's tools and system prompt are recorded in its session's first request only, and filledBody puts them back", async () => {
  const bodies = recordedRequests("basic");
  assert(bodies.length >= 3);
  await using up = startRecordedUpstream(bodies);
  await using s = await startServer({
    modelGateway: { upstreamAnthropic: up.url },
  });
  for (const b of bodies) {
    const res = await postAsClaudeCode(s.url, b);
    assertEquals(res.status, 200, await res.text());
  }
  const evs = await eventsOf(s);
  const byId = new Map(evs.map((e) => [e.event_id, e]));
  const requested = evs.filter((e) => e.kind === "model.requested");
  assertEquals(requested.length, bodies.length);
  const first = requestOf(requested[0]);
  assertEquals(first.body_same_as_previous, undefined);
  const firstBody = first.body as RequestBody;
  assert(JSON.stringify(firstBody.tools).length > 30_000);
  for (const [k, ev] of requested.entries()) {
    const r = requestOf(ev);
    const body = r.body as Record<string, unknown>;
    if (k > 0) {
      // The same tools and system prompt as the request before: left out.
      assertEquals(
        r.body_same_as_previous,
        ["system", "tools"],
        `request ${k}`,
      );
      assertEquals(body.tools, undefined);
      assertEquals(body.system, undefined);
    }
    // Put back, every field the client sent is there, the long ones as the
    // first request recorded them.
    const filled = filledBody(ev, (id) => byId.get(id)) as RequestBody;
    assertEquals(Object.keys(filled).sort(), Object.keys(bodies[k]).sort());
    assertEquals(filled.tools, firstBody.tools);
    assertEquals(filled.system, firstBody.system);
    assertEquals(filled.metadata, bodies[k].metadata);
  }
  // What the requests after the first cost to record: their new messages,
  // not the tools and system prompt again.
  const later = requested.slice(1).map((e) => JSON.stringify(e).length);
  assert(
    later.every((n) => n < 20_000),
    `later requests recorded ${later.join(", ")} characters`,
  );
  assertEquals((await s.store.verifyCapture("default")).ok, true);
});

Deno.test("a long field that changes is recorded again in full; the request after it compares with it", async () => {
  const a = [orderTool("get_order")];
  const b = [orderTool("get_order"), orderTool("cancel_order")];
  const sent = [a, a, b, b, a];
  await using g = await chatGateway();
  const { s, messages } = g;
  for (const [k, tools] of sent.entries()) {
    messages.push({ role: "user", content: `question ${k}` });
    const res = await postChat(s.url, { model: "gpt-test", messages, tools });
    const answer = await res.json();
    assertEquals(res.status, 200);
    messages.push(answer.choices[0].message);
  }
  const evs = await eventsOf(s);
  const byId = new Map(evs.map((e) => [e.event_id, e]));
  const requested = evs.filter((e) => e.kind === "model.requested");
  assertEquals(requested.length, sent.length);
  assertEquals(
    requested.map((e) => requestOf(e).body_same_as_previous ?? null),
    [null, ["tools"], null, ["tools"], null],
  );
  // One episode, one conversation: each continues the one before.
  assertEquals(
    requested.slice(1).map((e) =>
      (e.payload.conversation as { previous: string }).previous
    ),
    requested.slice(0, -1).map((e) => e.event_id),
  );
  for (const [k, ev] of requested.entries()) {
    const filled = filledBody(ev, (id) => byId.get(id)) as {
      tools: unknown;
    };
    assertEquals(filled.tools, sent[k], `request ${k}`);
  }
  // A request whose chain is not among the events given says so.
  const err = assertThrows(
    () => filledBody(requested[1], () => undefined),
    RecordedBodyError,
  );
  assert(err.message.includes("pass the whole capture's events"));
});

Deno.test("a request whose recording failed is never named as holding the fields of the next", async () => {
  const tools = [orderTool("get_order")];
  // Nested past what canonical JSON writes (1,000 levels): the gateway
  // forwards it, and its record cannot be sealed.
  let deep: unknown = 1;
  for (let i = 0; i < 1200; i++) deep = [deep];
  await using g = await chatGateway();
  const { s, messages } = g;
  for (let k = 0; k < 4; k++) {
    messages.push({ role: "user", content: `question ${k}` });
    const res = await postChat(s.url, {
      model: "gpt-test",
      messages,
      tools,
      ...(k === 1 ? { user_data: deep } : {}),
    });
    assertEquals(res.status, 200);
    messages.push((await res.json()).choices[0].message);
  }
  const evs = await eventsOf(s);
  const byId = new Map(evs.map((e) => [e.event_id, e]));
  const requested = evs.filter((e) => e.kind === "model.requested");
  // The second request's record failed; the third records the tools
  // again, the fourth leaves them out as the third's.
  assertEquals(requested.length, 3);
  assertEquals(
    requested.map((e) => requestOf(e).body_same_as_previous ?? null),
    [null, null, ["tools"]],
  );
  for (const ev of requested) {
    assertEquals(
      (filledBody(ev, (id) => byId.get(id)) as { tools: unknown }).tools,
      tools,
    );
  }
  assertEquals(s.server.modelGateway!.stats.record_misses, 1);
});

Deno.test("filledBody: a damaged chain is an error that says so, never another value", () => {
  const ev = (
    id: string,
    request: Record<string, unknown>,
    previous: string | null,
    kind = "model.requested",
  ) =>
    ({
      event_id: id,
      kind,
      payload: { request, conversation: { previous } },
    }) as unknown as TraceEvent;
  const a = ev("evt_a", { body: { messages: [] } }, null);
  const b = ev(
    "evt_b",
    { body: {}, body_same_as_previous: ["tools"] },
    "evt_a",
  );
  const c = ev(
    "evt_c",
    { body: {}, body_same_as_previous: ["tools"] },
    "evt_c",
  );
  const d = ev(
    "evt_d",
    { body: {}, body_same_as_previous: ["tools"] },
    "evt_m",
  );
  const m = ev("evt_m", {}, null, "message");
  // As the spool holds it: a long body stored as a blob.
  const raw = ev("evt_r", {
    body: { $blob: `sha256:${"0".repeat(64)}`, encoding: "json", size: 9 },
  }, null);
  const e = ev(
    "evt_e",
    { body: {}, body_same_as_previous: ["tools"] },
    "evt_r",
  );
  const byId = new Map([a, b, c, d, m, raw, e].map((x) => [x.event_id, x]));
  const lookup = (id: string) => byId.get(id);
  for (
    const [event, says] of [
      [b, "neither holds tools"],
      [c, "in a loop"],
      [d, "is a message event"],
      [m, "pass a model.requested event"],
      [e, "readEvents resolves blob references"],
    ] as const
  ) {
    const err = assertThrows(
      () => filledBody(event, lookup),
      RecordedBodyError,
    );
    assert(err.message.includes(says), err.message);
  }
});

Deno.test("wholeBodies: every request's body is recorded whole but for its history", async () => {
  const bodies = recordedRequests("compact");
  await using up = startRecordedUpstream(bodies);
  await using s = await startServer({
    modelGateway: { upstreamAnthropic: up.url, wholeBodies: true },
  });
  for (const b of bodies) {
    const res = await postAsClaudeCode(s.url, b);
    assertEquals(res.status, 200, await res.text());
  }
  const requested = (await eventsOf(s)).filter((e) =>
    e.kind === "model.requested"
  );
  assertEquals(requested.length, bodies.length);
  for (const ev of requested) {
    const r = requestOf(ev);
    assertEquals(r.body_same_as_previous, undefined);
    const body = r.body as Record<string, unknown>;
    assert(Array.isArray(body.tools) && body.system !== undefined);
  }
});

Deno.test("recordedBody leaves out only long fields the previous request had the same, and the known history", () => {
  const long = "x".repeat(REPEATED_FIELD_MIN_CHARS);
  const body = {
    model: "m",
    system: long,
    tools: [{ name: "t", description: long }],
    short: { a: 1 },
    messages: [1, 2, 3],
  };
  const first = recordedBody(body, {
    known: 0,
    historyKey: "messages",
    previous: null,
  });
  // Nothing known: the body as sent (the same object), digests kept.
  assertEquals(first.body === body, true);
  assertEquals(first.same, []);
  assertEquals(Object.keys(first.fields).sort(), ["system", "tools"]);
  const next = recordedBody({ ...body, system: long + "!" }, {
    known: 2,
    historyKey: "messages",
    previous: first.fields,
  });
  assertEquals(next.same, ["tools"]);
  assertEquals(next.body, {
    model: "m",
    system: long + "!",
    short: { a: 1 },
    messages: [3],
  });
  assert(next.fields.system !== first.fields.system);
  // Not a JSON object: as it is.
  assertEquals(
    recordedBody([1], { known: 0, historyKey: "messages", previous: null })
      .body,
    [1],
  );
});
