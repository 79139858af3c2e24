import {
  assertEquals,
  assertOk,
  assertRejects,
  assertThrows,
} from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { ToolGateway } from "../../lib/tool_gateway/tool_gateway.ts";
import { openRecordingSink } from "../../lib/tool_gateway/open_sink.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";

async function read(store: HarnessStore, id: string): Promise<TraceEvent[]> {
  return await Array.fromAsync(store.readEvents(id));
}

Deno.test("ToolGateway.wrap() records sync calls with named arguments, result and a parent link", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const gw = new ToolGateway(store.sink("g1"), {
    captureId: "g1",
    episodeId: "ep",
  });
  function findUser(email: string, active = true) {
    return { user_id: email === "a@x.io" ? "U-1" : "U-2", active };
  }
  const wrapped = gw.wrap(findUser, { logicalId: "find_user" });
  assertEquals(wrapped("a@x.io", false), { user_id: "U-1", active: false });
  assertEquals(wrapped.name, "findUser");
  const [s, c] = await read(store, "g1");
  assertEquals(s.kind, "tool.call.started");
  assertEquals(s.payload.arguments, { email: "a@x.io", active: false });
  assertEquals(s.payload.tool, {
    host_name: "findUser",
    logical_id: "find_user",
  });
  assertEquals(c.kind, "tool.call.completed");
  assertEquals(c.parent_event_id, s.event_id);
  assertEquals(c.payload.result, { user_id: "U-1", active: false });
  assertOk(typeof c.payload.duration_ms === "number");
});

Deno.test("ToolGateway.wrap() keeps async results, thrown errors and this exactly", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const gw = new ToolGateway(store.sink("g2"), {
    captureId: "g2",
    episodeId: "ep",
  });
  class RateLimited extends Error {
    code = "rate_limited";
  }
  const desk = {
    prefix: "O-",
    async get(order: { id: number }) {
      // The behaviour under test, not a wait: a tool that answers on a
      // later turn of the event loop.
      await new Promise((r) => setTimeout(r, 1));
      return `${this.prefix}${order.id}`;
    },
    fail(): never {
      throw new RateLimited("slow down");
    },
    async failLater(): Promise<never> {
      await Promise.resolve();
      throw new TypeError("bad id");
    },
  };
  desk.get = gw.wrap(desk.get, { hostName: "get_order" });
  desk.fail = gw.wrap(desk.fail, { hostName: "refund" });
  desk.failLater = gw.wrap(desk.failLater, { hostName: "cancel" });
  assertEquals(await desk.get({ id: 7 }), "O-7");
  const thrown = assertThrows(() => desk.fail(), RateLimited);
  assertEquals(thrown.message, "slow down");
  await assertRejects(() => desk.failLater(), TypeError);
  const evs = await read(store, "g2");
  assertEquals(evs.map((e) => e.kind), [
    "tool.call.started",
    "tool.call.completed",
    "tool.call.started",
    "tool.call.failed",
    "tool.call.started",
    "tool.call.failed",
  ]);
  assertEquals(evs[0].payload.arguments, { id: 7 });
  assertEquals(evs[3].payload.error, {
    name: "Error",
    message: "slow down",
    code: "rate_limited",
  });
  assertEquals((evs[5].payload.error as { name: string }).name, "TypeError");
});

Deno.test("destructive tools get state snapshots before and after; recordOutcome emits the environment's outcome", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const state = { orders: { "O-1": "delivered" } as Record<string, string> };
  const gw = new ToolGateway(store.sink("g3"), {
    captureId: "g3",
    episodeId: "ep",
    env: {
      snapshot: () => structuredClone(state),
      outcome: () => ({
        success: state.orders["O-1"] === "refunded",
        refunded: 1,
      }),
    },
  });
  const refund = gw.wrap((orderId: string) => {
    state.orders[orderId] = "refunded";
    return { ok: true };
  }, { hostName: "refund", destructive: true });
  const look = gw.wrap((orderId: string) => state.orders[orderId], {
    hostName: "get_order",
  });
  look("O-1");
  refund("O-1");
  const outcome = gw.recordOutcome();
  assertEquals(outcome?.payload, {
    type: "episode.outcome",
    success: true,
    outcome: { refunded: 1 },
  });
  const evs = await read(store, "g3");
  assertEquals(evs[0].payload.state_before, undefined); // read-only tool: no snapshot
  assertEquals(evs[2].payload.state_before, { orders: { "O-1": "delivered" } });
  assertEquals(evs[3].payload.state_after, { orders: { "O-1": "refunded" } });
  assertEquals(evs[2].payload.destructive, true);
  assertEquals(evs[4].kind, "annotation");
});

Deno.test("a sink that throws never changes what the tool returns or throws, and is counted", () => {
  const gw = new ToolGateway({
    emit() {
      throw new Error("disk full");
    },
  }, { captureId: "g4", episodeId: "ep" });
  const ok = gw.wrap((x: number) => x * 2);
  const bad = gw.wrap(() => {
    throw new RangeError("nope");
  });
  assertEquals(ok(21), 42);
  assertThrows(() => bad(), RangeError);
  assertEquals(gw.droppedEvents, 4);
  assertEquals(gw.recentFailures.at(-1), "disk full");
});

Deno.test("a sink that hangs does not delay the call: the gateway never awaits it", async () => {
  let pending = 0;
  const gw = new ToolGateway({
    emit() {
      pending++;
      return new Promise(() => {}); // never settles
    },
  }, { captureId: "g5", episodeId: "ep" });
  const f = gw.wrap((x: number) => Promise.resolve(x + 1));
  // A gateway that awaited the sink would never answer: nothing else is
  // left to run, so Deno fails the test at once ("Promise resolution is
  // still pending but the event loop has already resolved"); no timer.
  assertEquals(await f(1), 2);
  assertEquals(pending, 2);
});

Deno.test("when an ingest server owns the store, the gateway records through it over loopback", async () => {
  await using srv = await startServer();
  await using sink = openRecordingSink(srv.root, "g6");
  assertEquals(sink.mode, "http");
  const gw = new ToolGateway(sink, { captureId: "g6", episodeId: "ep" });
  const f = gw.wrap((id: string) => ({ id }), { hostName: "get" });
  for (let i = 0; i < 50; i++) f(`X-${i}`);
  await sink.close();
  assertEquals(srv.store.getCapture("g6")?.event_count, 100);
  assertEquals((await srv.store.verifyCapture("g6")).ok, true);
  const evs = await read(srv.store, "g6");
  assertEquals(evs[99].parent_event_id, evs[98].event_id);
});
