import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { withoutDeadEnds } from "../../lib/forms/core_steps.ts";
import { EmptyPackageError } from "../../lib/package/empty_package.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { buildAgentForm } from "../../lib/forms/agent/build_agent_form.ts";
import {
  foldOf,
  MIN_VALIDATION_EPISODES,
  validateAgentForm,
} from "../../lib/forms/agent/self_validation.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { summarizePackage } from "../../lib/package/summary.ts";
import { anyNodes } from "../../lib/forms/form_table.ts";
import { learnBindings } from "../../lib/forms/agent/bindings.ts";
import { AgentEngine } from "../../lib/forms/agent/agent_engine.ts";

const load = (domain: string) => {
  const data = loadTauData(
    Deno.readTextFileSync(
      new URL(`../../fixtures/tau2_${domain}_slice.json`, import.meta.url),
    ),
  );
  return {
    effects: data.effects,
    ok: data.episodes.filter((e) => e.norm.success === true).map((e) => e.norm),
  };
};

Deno.test("self-validation: the agent form is cross-validated on its training episodes, each held out once, reported in the package and its summary", () => {
  const { effects, ok } = load("retail");
  const r = compileBehavior(ok, {
    name: "retail",
    effects,
    form: "agent",
    tune: false,
  });
  const v = r.package.verification.validation;
  assertOk(v, "a validation report");
  assertEquals(v.episodes, ok.length);
  assertOk(v.folds >= 2 && v.folds <= 4, JSON.stringify(v));
  assertOk(v.fit_episodes < ok.length && v.fit_episodes >= ok.length / 2);
  assertOk(v.served > 0 && v.served <= v.calls, JSON.stringify(v));
  assertEquals(v.verdict, v.stopped ? "stops conversations" : "pays");
  // Deterministic: the same episodes in another order give the same report.
  // (The form trains on the episodes without their refused or failed
  // calls, which are evidence, not steps: `withoutDeadEnds`.)
  const again = validateAgentForm([...ok].map(withoutDeadEnds).reverse(), {
    effects,
  });
  assertEquals(again, v);
  const summary = summarizePackage(r.package);
  assertOk(
    summary.includes(
      `validation    ${v.verdict}: on ${v.episodes} training episodes, each held out once (${v.folds} folds`,
    ),
    summary,
  );
});

Deno.test("self-validation: too few episodes to cross-validate is said, not hidden", () => {
  const { effects, ok } = load("telecom");
  assertOk(ok.length < MIN_VALIDATION_EPISODES);
  const r = compileBehavior(ok, { name: "telecom", effects, form: "agent" });
  assertEquals(r.package.verification.validation, null);
  assertEquals(r.package.verification.tuning, null);
  assertOk(
    summarizePackage(r.package).includes("too few training episodes"),
  );
});

Deno.test("self-validation: lookups that saved nothing on validation are not shipped, each dropped with that reason", () => {
  const { effects, ok } = load("retail");
  const kept = buildAgentForm(ok, { effects });
  const lookups = (anyNodes(kept.compiled.ir).agent as { lookups: string[] })
    .lookups;
  assertOk(lookups.length > 0);
  const why = "validation: the lookups served none of 10 calls";
  const none = buildAgentForm(ok, { effects, dropLookups: why });
  assertEquals(
    (anyNodes(none.compiled.ir).agent as { lookups: string[] }).lookups,
    [],
  );
  for (const id of lookups) {
    assertOk(none.dropped.some((d) => d.node === id && d.why === why), id);
  }
});

Deno.test("hold-out check of each checking cover: a value seen in one episode only is refused with that episode held out", () => {
  const { effects, ok } = load("retail");
  const bindings = learnBindings(ok, { effects });
  const writes = bindings.filter((b) => effects[b.tool] !== "read");
  assertOk(writes.length > 0 && writes.every((b) => b.holdout));
  for (const b of writes) {
    assertOk(b.holdout!.refused <= b.holdout!.calls);
    assertEquals(b.holdout!.calls, b.applicable);
  }
  // A state-changing argument whose every value came from one source seen
  // in a single episode cannot survive holding that episode out.
  const one = ok.slice(0, 1);
  const single = learnBindings([...one, ...ok.slice(1, 4)], { effects })
    .filter((b) => b.holdout && b.holdout.refused > 0);
  assertOk(single.length > 0, "some argument refused when held out");
  for (const b of single) assertOk(b.holdout!.episodes.length > 0);
});

Deno.test("unseen_tools: a state-changing tool training never made is checked by argument name; a destructive one's unknown argument is refused, a write tool's is free", () => {
  const { effects, ok } = load("retail");
  const full = compileBehavior(ok, { name: "retail", effects, form: "agent" })
    .package;
  const choice = Object.values(anyNodes(full.ir)).find((n) =>
    n.kind === "choice"
  )!;
  assertOk(choice.kind === "choice");
  const cancel = choice.tools.find((t) => t.tool === "cancel_pending_order")!;
  const ir = structuredClone(full.ir);
  ir.nodes[choice.id] = {
    ...choice,
    tools: [cancel],
    unseen_tools: [
      { tool: "modify_pending_order_payment", effect: "destructive" },
      { tool: "transfer_to_human_agents", effect: "write" },
    ],
  };
  const engine = new AgentEngine(ir);
  engine.user("Hi, I'm ana_lima_1, please move order #W10 to my card.");
  engine.record({
    tool: "get_user_details",
    args: { user_id: "ana_lima_1" },
    ok: true,
    result: JSON.stringify({ user_id: "ana_lima_1", orders: ["#W10"] }),
  }, "model");
  engine.record({
    tool: "get_order_details",
    args: { order_id: "#W10" },
    ok: true,
    result: JSON.stringify({ order_id: "#W10", status: "pending" }),
  }, "model");
  assertEquals(
    engine.check("modify_pending_order_payment", { order_id: "#W10" }),
    { ok: true },
  );
  const other = engine.check("modify_pending_order_payment", {
    order_id: "#W99",
  });
  assertOk(!other.ok && other.reason.includes("not among its candidates"));
  const unknownArg = engine.check("modify_pending_order_payment", {
    order_id: "#W10",
    payment_method_id: "credit_card_1",
  });
  assertOk(
    !unknownArg.ok && unknownArg.reason.includes("payment_method_id"),
    JSON.stringify(unknownArg),
  );
  assertEquals(
    engine.check("transfer_to_human_agents", { summary: "wants a person" }),
    { ok: true },
  );
  // A destructive tool training never made, with nothing to check: refused.
  const bare = structuredClone(ir);
  const c = bare.nodes[choice.id];
  assertOk(c.kind === "choice");
  c.unseen_tools = [{ tool: "wipe_account", effect: "destructive" }];
  const strict = new AgentEngine(bare);
  const wipe = strict.check("wipe_account", {});
  assertOk(
    !wipe.ok && wipe.reason.includes("none of its arguments"),
    JSON.stringify(wipe),
  );
  const never = engine.check("book_flight", { id: "x" });
  assertOk(!never.ok && never.reason.includes("not a choice"));
});

/** An engine that has seen a user with two orders. */
function withTwoOrders(engine: AgentEngine): AgentEngine {
  engine.user("Hi, please check my orders.");
  engine.record({
    tool: "get_user_details",
    args: { user_id: "ana_lima_1" },
    ok: true,
    result: JSON.stringify({ user_id: "ana_lima_1", orders: ["#W10", "#W11"] }),
  }, "model");
  return engine;
}

Deno.test("learned fan-out caps: a lookup whose tool the agent called more often in one conversation than the root's cap gets the most it made, and the engine keeps to each node's own cap", () => {
  const { effects, ok } = load("retail");
  const pkg = compileBehavior(ok, { name: "retail", effects, form: "agent" })
    .package;
  const nodes = anyNodes(pkg.ir);
  const root = nodes[pkg.ir.root];
  assertOk(root.kind === "agent");
  const most = (tool: string) =>
    Math.max(
      ...ok.map((ep) =>
        new Set(
          ep.steps.filter((s) => s.ok && s.logical_tool === tool).map((s) =>
            JSON.stringify(s.arguments)
          ),
        ).size
      ),
    );
  let learned = 0;
  for (const id of root.lookups) {
    const n = nodes[id];
    assertOk(n.kind === "lookup");
    const m = Math.min(most(n.tool), 20);
    if (m > root.fanout) {
      assertEquals(n.fanout, m, id);
      learned++;
    } else assertEquals(n.fanout, undefined, id);
  }
  assertOk(learned > 0, "get_order_details is read more than 5 times");
  // A node's own cap of 1 with two candidates: capped, only the first
  // issued (one argument over a list).
  const ir = structuredClone(pkg.ir);
  const node = Object.values(ir.nodes).find((n) =>
    n.kind === "lookup" && n.tool === "get_order_details"
  )!;
  assertOk(node.kind === "lookup");
  node.fanout = 1;
  const engine = withTwoOrders(new AgentEngine(ir));
  const due = engine.dueLookups().filter((c) => c.node === node.id);
  assertEquals(due.map((c) => c.args), [{ order_id: "#W10" }]);
  assertEquals(engine.cappedBy[node.id], 1);
  node.fanout = 2;
  const wide = withTwoOrders(new AgentEngine(ir));
  assertEquals(
    wide.dueLookups().filter((c) => c.node === node.id).length,
    2,
  );
});

/**
 * A τ² file of 8 conversations: each reads an account by an id nothing
 * explains; two of them, both in one validation fold, then read an order
 * listed in that account.
 */
function ordersReadTwice(): string {
  const byFold = new Map<number, number[]>();
  for (let k = 0; k < 40; k++) {
    const f = foldOf(`tau2_${k}_0`);
    byFold.set(f, [...(byFold.get(f) ?? []), k]);
  }
  const pairFold = [...byFold].find(([, ks]) => ks.length >= 2)![0];
  const pair = byFold.get(pairFold)!.slice(0, 2);
  const others = [...byFold].filter(([f]) => f !== pairFold)
    .flatMap(([, ks]) => ks).slice(0, 6);
  const simulation = (k: number) => ({
    id: `s${k}`,
    task_id: String(k),
    trial: 0,
    reward_info: { reward: 1 },
    messages: [
      { role: "user", content: "Hello, please look at my account." },
      {
        role: "assistant",
        content: "",
        tool_calls: [{
          id: `a${k}`,
          name: "get_account",
          arguments: { account_id: `zq${k}x${k * 7}` },
        }],
      },
      {
        role: "tool",
        id: `a${k}`,
        content: JSON.stringify({ orders: [`ord${k}a`] }),
      },
      ...(pair.includes(k)
        ? [
          {
            role: "assistant",
            content: "",
            tool_calls: [{
              id: `o${k}`,
              name: "get_order",
              arguments: { order_id: `ord${k}a` },
            }],
          },
          {
            role: "tool",
            id: `o${k}`,
            content: JSON.stringify({ status: "delivered" }),
          },
        ]
        : []),
      { role: "assistant", content: "All set." },
    ],
  });
  return JSON.stringify({
    info: { environment_info: { domain_name: "shop" } },
    tasks: [],
    simulations: [...pair, ...others].map(simulation),
  });
}

Deno.test("self-validation: when no training episode held out is served, no lookup is kept, and compile refuses the package that would do nothing, naming the lookup left out and why", () => {
  const data = loadTauData(ordersReadTwice());
  const ok = data.episodes.map((e) => e.norm);
  assertEquals(ok.length, 8);
  const effects = { get_account: "read", get_order: "read" } as const;
  // Built from every episode, the order lookup pays in training replay.
  const full = buildAgentForm(ok, { effects });
  assertEquals(
    (anyNodes(full.compiled.ir).agent as { lookups: string[] }).lookups,
    ["lookup_get_order"],
  );
  // Held out in turn, no episode is served: the two that read an order
  // share a fold, so its form never saw such a read. Without the lookup
  // the package would leave everything to the model (issue #36: an empty
  // package is refused with the reason).
  const err = assertThrows(
    () => compileBehavior(ok, { name: "shop", effects, form: "agent" }),
    EmptyPackageError,
  );
  assertOk(
    /Left out: lookup_get_order \(validation: on 8/.test(err.message),
    err.message,
  );
});
