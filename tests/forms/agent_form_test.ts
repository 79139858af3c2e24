import { assertEquals, assertOk } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { learnBindings } from "../../lib/forms/agent/bindings.ts";
import {
  allows,
  candidatesOf,
  type ConversationState,
} from "../../lib/forms/agent/sources.ts";
import { shapeOf } from "../../lib/forms/agent/user_words.ts";
import { AgentEngine } from "../../lib/forms/agent/agent_engine.ts";
import { buildAgentForm } from "../../lib/forms/agent/build_agent_form.ts";
import { replayAgent } from "../../lib/forms/agent/agent_replay.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { splitByTask } from "../../eval/split_eval.ts";
import {
  AgentSession,
  ChoiceRefusedError,
} from "../../lib/forms/agent/agent_session.ts";
import { validatePackage } from "../../lib/forms/validate_package.ts";
import { explainPackage } from "../../lib/forms/explain_package.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import {
  type DeclaredTool,
  declareTool,
} from "../../lib/tool_gateway/parameters.ts";

const slice = loadTauData(
  Deno.readTextFileSync(
    new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
  ),
);
const ok = slice.episodes.filter((e) => e.norm.success === true);

Deno.test("normalization binds every user message: names given in a later message have a source", () => {
  const ep = slice.episodes.find((e) =>
    e.norm.steps.some((s) => s.logical_tool === "find_user_id_by_name_zip")
  )!;
  const step = ep.norm.steps.find((s) =>
    s.logical_tool === "find_user_id_by_name_zip"
  )!;
  const src = step.arg_lineage["first_name"];
  assertOk(src?.startsWith("input.user["), String(src));
});

Deno.test("sources: shapes, a prefix before a user word, the word after another, text checks", () => {
  assertEquals(shapeOf("Santos"), "Aa");
  assertEquals(shapeOf("19122"), "9{5}");
  const state: ConversationState = {
    user: ["Hi, I am Raj Santos, zip 98157, order W123456"],
    calls: [{
      tool: "get_user_details",
      args: { user_id: "u1" },
      ok: true,
      result: { orders: ["#W1", "#W2"] },
    }],
  };
  assertEquals(
    candidatesOf({ from: "user", shape: "A9", prefix: "#" }, state),
    ["#W123456"],
  );
  assertEquals(
    candidatesOf({ from: "user", shape: "Aa", after: "first" }, state, {
      first: "Raj",
    }),
    ["Santos"],
  );
  assertEquals(
    candidatesOf({
      from: "result",
      tool: "get_user_details",
      path: ["orders", "[*]"],
    }, state),
    ["#W1", "#W2"],
  );
  assertOk(allows({ from: "user_text" }, { state, value: "Raj Santos" }));
  assertOk(!allows({ from: "user_text" }, { state, value: "Ann Lee" }));
});

Deno.test("bindings per tool and argument: ids bind to earlier results, pooled over episodes wherever the call sits", () => {
  const bs = learnBindings(ok.map((e) => e.norm), { effects: slice.effects });
  const user = bs.find((b) =>
    b.tool === "get_user_details" && b.path === "user_id"
  )!;
  assertOk(user.lookup.deterministic, JSON.stringify(user.lookup));
  assertOk(
    user.lookup.sources.every((s) =>
      s.from === "result" && s.tool.startsWith("find_user_id_by_")
    ),
  );
  const order = bs.find((b) =>
    b.tool === "get_order_details" && b.path === "order_id"
  )!;
  assertOk(order.lookup.speculative);
  assertOk(order.applicable >= 20 && order.episodes.length > 0);
  // Every state-changing argument of the choice cover explains its training calls.
  for (const b of bs) {
    if (slice.effects[b.tool] !== "destructive" || !b.choice.deterministic) {
      continue;
    }
    assertEquals(b.choice.counterexamples, 0);
  }
});

Deno.test("the agent engine: lookups due once their arguments bind, capped fan-out, writes checked and the cache dropped", () => {
  const form = buildAgentForm(ok.map((e) => e.norm), {
    effects: slice.effects,
  });
  const ir = form.compiled.ir;
  const engine = new AgentEngine(ir);
  assertEquals(engine.dueLookups(), []);
  engine.user("Hello, my email is ana.lima1234@example.com");
  const due = engine.dueLookups();
  assertEquals(due.map((d) => d.tool), ["find_user_id_by_email"]);
  assertEquals(engine.dueLookups(), []); // issued once
  engine.record({
    tool: "find_user_id_by_email",
    args: due[0].args,
    ok: true,
    result: "ana_lima_1",
  }, "lookup");
  const next = engine.dueLookups();
  assertEquals(next.map((d) => [d.tool, d.args]), [[
    "get_user_details",
    { user_id: "ana_lima_1" },
  ]]);
  engine.record({
    tool: "get_user_details",
    args: next[0].args,
    ok: true,
    result: { orders: ["#W1", "#W2", "#W3", "#W4", "#W5", "#W6", "#W7"] },
  }, "lookup");
  // Seven orders pass the node's cap: a lookup of one argument over a list
  // reads the first ones in the list's order up to the cap, and that it was
  // capped is counted; nothing more is due later.
  const node = ir.nodes.lookup_get_order_details as IrNode | undefined;
  assertOk(node?.kind === "lookup");
  const cap = node.fanout ?? 5;
  assertOk(cap < 7, `cap ${cap}`);
  const orders = (calls: { tool: string; args: Record<string, unknown> }[]) =>
    calls.filter((d) => d.tool === "get_order_details").map((d) =>
      d.args.order_id
    );
  assertEquals(
    orders(engine.dueLookups()),
    ["#W1", "#W2", "#W3", "#W4", "#W5", "#W6", "#W7"].slice(0, cap),
  );
  assertOk(engine.capped >= 1);
  assertEquals(orders(engine.dueLookups()), []);
  assertOk(engine.cached("get_user_details", { user_id: "ana_lima_1" }));
  const refused = engine.check("cancel_pending_order", {
    order_id: "#W999",
    reason: "no longer needed",
  });
  assertEquals(refused.ok, false);
  assertOk(engine.check("drop_database", {}).ok === false);
  engine.record({
    tool: "get_order_details",
    args: { order_id: "#W1" },
    ok: true,
    result: { order_id: "#W1", status: "pending" },
  }, "model");
  assertEquals(
    engine.check("cancel_pending_order", {
      order_id: "#W1",
      reason: "no longer needed",
    }),
    { ok: true },
  );
  engine.record(
    {
      tool: "cancel_pending_order",
      args: { order_id: "#W1", reason: "no longer needed" },
      ok: true,
      result: {},
    },
    "choice",
    { changesState: true },
  );
  assertEquals(
    engine.cached("get_user_details", { user_id: "ana_lima_1" }),
    null,
  );
});

Deno.test("one package for the domain: the compiler picks the agent form, replays training, never makes a wrong write on held-out episodes", () => {
  const { train, held } = splitByTask(slice.episodes, 1);
  const r = compileBehavior(
    train.filter((e) => e.norm.success === true).map((e) => e.norm),
    { name: "retail", effects: slice.effects },
  );
  assertEquals(r.compiled.ir.nodes[r.compiled.ir.root].kind, "agent");
  assertOk(
    r.verification.structural_ok,
    r.verification.structural_problems.join(),
  );
  assertEquals(r.verification.episodes_replayed, r.normalized.length);
  validatePackage(JSON.parse(JSON.stringify(r.package)));
  const text = explainPackage(r.package);
  assertOk(text.includes("look up get_user_details"), text);
  let lookups = 0, calls = 0;
  for (const e of held) {
    const rep = replayAgent(r.compiled.ir, {
      episode: e.norm,
      effects: slice.effects,
    });
    assertEquals(rep.wrong, 0);
    calls += rep.verdicts.length;
    lookups += rep.verdicts.filter((v) => v === "lookup").length;
  }
  assertOk(lookups > 0 && lookups < calls, `${lookups}/${calls}`);
  // Deterministic: the same episodes in another order give the same package.
  const again = compileBehavior(
    train.filter((e) => e.norm.success === true).map((e) => e.norm).reverse(),
    { name: "retail", effects: slice.effects },
  );
  assertEquals(canonicalJson(again.package), canonicalJson(r.package));
});

Deno.test("AgentSession runs the package against real tool functions: lookups, served reads, a refused write calls nothing, an allowed write acts", async () => {
  const r = compileBehavior(ok.map((e) => e.norm), {
    name: "retail",
    effects: slice.effects,
  });
  const called: string[] = [];
  const db = {
    users: { ana_lima_1: { user_id: "ana_lima_1", orders: ["#W10", "#W11"] } },
    orders: {
      "#W10": { order_id: "#W10", status: "pending", items: [] },
      "#W11": { order_id: "#W11", status: "delivered", items: [] },
    } as Record<string, Record<string, unknown>>,
  };
  const tools: Record<string, DeclaredTool> = {};
  for (const t of r.package.manifest.required_capabilities) {
    tools[t] = declareTool((a: Record<string, unknown>) => {
      called.push(`${t} ${canonicalJson(a)}`);
      if (t === "find_user_id_by_email") {
        if (a.email === "ana.lima1234@example.com") return "ana_lima_1";
        throw new Error("user not found");
      }
      if (t === "get_user_details") {
        return db.users[a.user_id as keyof typeof db.users];
      }
      if (t === "get_order_details") {
        const o = db.orders[a.order_id as string];
        if (!o) throw new Error("order not found");
        return o;
      }
      if (t === "cancel_pending_order") {
        db.orders[a.order_id as string].status = "cancelled";
        return db.orders[a.order_id as string];
      }
      return {};
    }, "object");
  }
  const session = new AgentSession(r.package, { tools });
  const made = await session.user(
    "Hi! My email is ana.lima1234@example.com, please cancel W10.",
  );
  assertOk(
    made.some((m) => m.tool === "get_user_details"),
    JSON.stringify(made),
  );
  const before = called.length;
  const served = await session.read("get_user_details", {
    user_id: "ana_lima_1",
  });
  assertEquals(served.from, "lookup");
  assertEquals(called.length, before);
  let refused: unknown = null;
  try {
    await session.act({
      tool: "cancel_pending_order",
      arguments: { order_id: "#W99", reason: "no longer needed" },
    });
  } catch (err) {
    refused = err;
  }
  assertOk(refused instanceof ChoiceRefusedError);
  assertEquals(called.length, before);
  assertEquals(db.orders["#W10"].status, "pending");
  await session.read("get_order_details", { order_id: "#W10" });
  const acted = await session.act({
    tool: "cancel_pending_order",
    arguments: { order_id: "#W10", reason: "no longer needed" },
  });
  assertOk(acted.ok);
  assertEquals(db.orders["#W10"].status, "cancelled");
  const cands = session.candidates();
  // Training users wrote their reasons: the candidates are named, with the
  // user's text, not a closed list.
  const reason = cands.cancel_pending_order.reason;
  assertOk(
    typeof reason === "string" &&
      reason.startsWith("text the user wrote, or one of ") &&
      reason.includes("no longer needed"),
    JSON.stringify(reason),
  );
});
