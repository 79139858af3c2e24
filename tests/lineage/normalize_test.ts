import { assertEquals } from "../_assert.ts";
import { HashChainer } from "../../lib/trace/chain.ts";
import {
  message,
  toolCallCompleted,
  toolCallStarted,
  type TraceEvent,
} from "../../lib/trace/mod.ts";
import {
  normalizeEpisode,
  synthNodeId,
  synthStore,
} from "../../lib/lineage/normalize.ts";
import { fixedContext } from "../_helpers.ts";

/** Build a sealed episode from (tool, args, result) triples. */
export function episodeOf(
  calls: [string, Record<string, unknown>, unknown][],
  prompt?: string,
): { capture_id: string; episode_id: string; events: TraceEvent[] } {
  const ctx = fixedContext("cap_n", "ep_n");
  const chain = new HashChainer();
  const events: TraceEvent[] = [];
  if (prompt) {
    events.push(chain.seal(message(ctx, { role: "user", text: prompt })).event);
  }
  for (const [name, args, result] of calls) {
    const tool = { host_name: name, logical_id: null };
    const s = chain.seal(toolCallStarted(ctx, { tool, arguments: args })).event;
    events.push(s);
    events.push(
      chain.seal(toolCallCompleted(ctx, { tool, arguments: args, result }, {
        parentEventId: s.event_id,
      })).event,
    );
  }
  return { capture_id: "cap_n", episode_id: "ep_n", events };
}

Deno.test("normalizeEpisode() attributes ids to the exact result paths they came from", () => {
  const ep = episodeOf([
    ["find_user", { email: "ana@example.com" }, { user_id: "U-1042" }],
    ["list_orders", { user_id: "U-1042" }, {
      orders: [{ order_id: "O-7781", total: 42.5 }],
    }],
    ["refund", { order_id: "O-7781", amount: 42.5, reason: "damaged" }, {
      ok: true,
    }],
  ], "Refund my order please, I am ana@example.com");
  const n = normalizeEpisode(ep, { canonical: { refund: "orders.refund" } });
  assertEquals(n.steps.map((s) => s.logical_tool), [
    "find_user",
    "list_orders",
    "orders.refund",
  ]);
  assertEquals(n.steps[0].arg_lineage, { email: "input.text~word[6]" });
  assertEquals(n.steps[1].arg_lineage, { user_id: "find_user_0.user_id" });
  assertEquals(n.steps[2].arg_lineage, {
    order_id: "list_orders_1.orders[0].order_id",
    amount: "list_orders_1.orders[0].total",
    reason: null,
  });
  assertEquals(n.steps[2].symbolicArgs(), {
    order_id: "$ref(list_orders_1.orders[0].order_id)",
    amount: "$ref(list_orders_1.orders[0].total)",
    reason: "damaged",
  });
  assertEquals(n.steps[2].store, synthStore("orders.refund", 2));
  assertEquals(n.steps[2].node_id, synthNodeId("orders.refund", 2));
  assertEquals(
    synthStore("mcp:everything/get-sum", 3),
    "mcp_everything_get_sum_3",
  );
  assertEquals(Object.keys(n.steps[2].state_before).sort(), [
    "find_user_0",
    "input",
    "list_orders_1",
  ]);
  // "damaged" is identifier-like and has no source: the model chose it.
  assertEquals(n.decisions, [{
    index: 2,
    node_id: "n2_orders_refund",
    inputs: ["find_user_0", "input", "list_orders_1"],
    outputs: ["reason"],
    kind: "predict",
  }]);
});

Deno.test("identifiers inside command strings become templates with refs, by whole tokens only", () => {
  const ep = episodeOf([
    ["Bash", { command: "grep -l pending invoices/" }, {
      stdout: "pending: INV-2210\n",
      stderr: "",
    }],
    ["Bash", { command: "cat invoices/INV-2210.txt" }, {
      stdout: '{"invoice": "INV-2210", "owner": "U-981"}',
    }],
    ["Bash", { command: 'grep "^U-981," users.csv' }, { stdout: "U-981,Ana" }],
    ["Bash", { command: "echo INV-221" }, { stdout: "INV-221" }],
  ]);
  const n = normalizeEpisode(ep);
  assertEquals(
    n.steps[1].arg_lineage.command,
    "cat invoices/$ref(Bash_0.stdout~word[1]).txt",
  );
  assertEquals(
    n.steps[2].arg_lineage.command,
    'grep "^$ref(Bash_1.stdout~json.owner)," users.csv',
  );
  assertEquals(n.steps[3].arg_lineage.command, null); // INV-221 is not a whole token of any result
  assertEquals(
    n.steps[1].symbolicArgs().command,
    "cat invoices/$ref(Bash_0.stdout~word[1]).txt",
  );
});

Deno.test("values the model chose with no source become decisions; failed and incomplete calls are steps that are not ok", () => {
  const ctx = fixedContext("cap_n", "ep_n");
  const chain = new HashChainer();
  const tool = { host_name: "get_order", logical_id: null };
  const events = [
    chain.seal(
      toolCallStarted(ctx, { tool, arguments: { order_id: "O-5555" } }),
    ).event,
  ];
  const n = normalizeEpisode({ capture_id: "c", episode_id: "e", events });
  assertEquals(n.steps[0].ok, false);
  assertEquals((n.steps[0].error as { type: string }).type, "incomplete");
  assertEquals(n.decisions, [{
    index: 0,
    node_id: "n0_get_order",
    inputs: [],
    outputs: ["order_id"],
    kind: "predict",
  }]);
});

Deno.test("lineage finds ids joined into longer tokens, numbers written in CSV text, and prefers the working directory for a path's prefix", async () => {
  const { resolvePath } = await import("../../lib/lineage/paths.ts");
  const { episodeStarted } = await import("../../lib/trace/mod.ts");
  // An id inside a joined file name, in both directions.
  const a = episodeOf([
    ["ls", { dir: "out" }, "shipped-ORD-7731.txt\nnotes.md"],
    ["get_order", { order_id: "ORD-7731" }, { order_id: "ORD-7731" }],
    ["archive", { file: "done-ORD-7731.log" }, "ok"],
  ]);
  const na = normalizeEpisode(a);
  const src = na.steps[1].arg_lineage.order_id!;
  assertEquals(resolvePath(na.steps[1].state_before, src), "ORD-7731");
  assertEquals(
    na.steps[2].arg_lineage.file,
    "done-$ref(get_order_1.order_id).log",
  );
  // A number of three digits written in CSV text.
  const b = episodeOf([
    ["report", {}, "3:ORD-7731,420,pending"],
    ["charge", { amount: 420, count: 3 }, "ok"],
  ]);
  const nb = normalizeEpisode(b);
  const amount = nb.steps[1].arg_lineage.amount!;
  assertEquals(resolvePath(nb.steps[1].state_before, amount), "420");
  assertEquals(nb.steps[1].arg_lineage.count, null); // small counts stay unattributed
  // The working directory explains the prefix; pieces of it found in an
  // unrelated output do not.
  const c = episodeOf([
    ["ls", { dir: "." }, "agent-demo notes.txt"],
    ["read", { path: "/home/dev/agent-demo/work/notes.txt" }, "hi"],
  ]);
  const ctx = fixedContext("cap_n", "ep_n");
  const chain = new HashChainer();
  const started = chain.seal(
    episodeStarted(ctx, { cwd: "/home/dev/agent-demo/work" }),
  ).event;
  const rest = c.events.map((e) => {
    const { sequence: _s, prev_event_hash: _p, event_hash: _h, ...u } = e;
    return chain.seal(u).event;
  });
  const nc = normalizeEpisode({ ...c, events: [started, ...rest] });
  assertEquals(
    nc.steps[1].arg_lineage.path,
    "$ref(input.cwd)/notes.txt",
  );
});
