import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import type { Episode } from "../../lib/lineage/records.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { consolidate } from "../../lib/forms/tree/consolidate.ts";
import { normalizeAll } from "../../lib/lineage/normalize.ts";
import { verify } from "../../lib/forms/tree/verify.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import { tempDir } from "../_helpers.ts";

const CONTRACTS = {
  "predicate|find_user>list_orders>get_order|get_order#0.status": [
    "policy.md#refunds",
  ],
};

async function deskEpisodes(count: number, first = 0): Promise<Episode[]> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", count, { first });
  return await loadEpisodes(store, "desk");
}

function nodesOf(
  ir: { nodes: Record<string, unknown> },
  kind: string,
): IrNode[] {
  return (Object.values(ir.nodes) as IrNode[]).filter((n) => n.kind === kind);
}

Deno.test("the order desk compiles: a guarded branch, refs, bounded retry, a residual choice, a constant, no noise; replay promotes to E4", async () => {
  const episodes = await deskEpisodes(240);
  const r = compileBehavior(episodes, {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: CONTRACTS,
  });
  const { ir } = r.package;
  // The refund/cancel branch is a deterministic branch on the order's status.
  const [branch] = nodesOf(ir, "branch") as Extract<
    IrNode,
    { kind: "branch" }
  >[];
  assertEquals(branch.on, "get_order_2.status");
  assertEquals(branch.cases.map((c) => c.equals), ["delivered", "pending"]);
  assertEquals(ir.nodes[branch.otherwise].kind, "stop");
  // Ids flow by refs.
  const actions = nodesOf(ir, "action") as Extract<
    IrNode,
    { kind: "action" }
  >[];
  const refund = actions.find((a) => a.tool === "refund")!;
  assertEquals(refund.args, {
    amount: { ref: "get_order_2.total" },
    order_id: { ref: "get_order_2.order_id" },
  });
  // The retry is bounded recovery.
  assertEquals(refund.recovery, {
    retry_on: ["rate_limited"],
    max_attempts: 2,
  });
  // The constant reason is a constant.
  const cancel = actions.find((a) => a.tool === "cancel")!;
  assertEquals(cancel.args.reason, { const: "customer_request" });
  // "Which order" stays a residual predict leaf, followed by a symbolic ref.
  const predicts = nodesOf(ir, "predict") as Extract<
    IrNode,
    { kind: "predict" }
  >[];
  assertEquals(predicts.length, 1);
  assertEquals(predicts[0].decides.kind, "index");
  const getOrder = actions.find((a) => a.tool === "get_order")!;
  assertEquals(getOrder.args.order_id, {
    ref: "list_orders_1.orders[$sel_n2_get_order].order_id",
  });
  // Noise steps are not in the skeleton: one call per tool per path.
  assertEquals(actions.map((a) => a.tool).sort(), [
    "cancel",
    "find_user",
    "get_order",
    "list_orders",
    "notify",
    "notify",
    "refund",
  ]);
  // Replay is fully clean and promotes every deterministic node to E4.
  assertEquals(r.verification.structural_ok, true);
  assertEquals(r.verification.replay_passed, r.verification.replay_checks);
  assertOk(r.verification.replay_checks > 1000);
  assertEquals(r.package.manifest.promoted_to_e4, true);
  for (const p of r.package.provenance) {
    assertOk(
      ["E4", "residual", "structural"].includes(p.grade),
      `${p.node_id}: ${p.grade}`,
    );
  }
});

Deno.test("without a contract the destructive fork stays a model decision: safety-sensitive guards need E3", async () => {
  const episodes = await deskEpisodes(120);
  const r = compileBehavior(episodes, { name: "desk", effects: DESK_EFFECTS });
  const predicts = nodesOf(r.package.ir, "predict") as Extract<
    IrNode,
    { kind: "predict" }
  >[];
  assertEquals(predicts.map((p) => p.decides.kind).sort(), ["arm", "index"]);
  const pred = r.candidates.find((c) =>
    c.key.join("|") ===
      "predicate|find_user>list_orders>get_order|get_order#0.status"
  )!;
  assertEquals([pred.grade, pred.status], ["E1", "proposed"]);
});

Deno.test("a contradicted fact stays contested and never becomes a hard rule; contracts do not override it", async () => {
  const episodes = normalizeAll(await deskEpisodes(60));
  // Contradict the constant reason in one episode.
  const ep = episodes.find((e) =>
    e.steps.some((s) => s.logical_tool === "cancel")
  )!;
  const step = ep.steps.find((s) => s.logical_tool === "cancel")!;
  step.arguments = { ...step.arguments, reason: "changed_mind" };
  const key = "constant|find_user>list_orders>get_order>cancel|reason";
  const cands = consolidate(episodes, {
    effects: DESK_EFFECTS,
    contracts: { [key]: ["policy.md#reasons"] },
  });
  const reason = cands.find((c) => c.key.join("|") === key)!;
  assertEquals(reason.status, "contested");
  assertEquals(reason.grade, "E0");
  assertEquals(reason.contract_sources, ["policy.md#reasons"]);
  assertEquals(reason.evidence.counterexamples, 1);
  const r = compileBehavior(episodes, {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: CONTRACTS,
  });
  const cancel = Object.values(r.package.ir.nodes).find((n) =>
    n.kind === "action" && n.tool === "cancel"
  ) as Extract<IrNode, { kind: "action" }>;
  assertOk(
    !("const" in cancel.args.reason),
    "a contested constant was compiled",
  );
});

Deno.test("evidence grades: a constant seen in three episodes is weaker than a dataflow with many distinct values", async () => {
  const cands = consolidate(normalizeAll(await deskEpisodes(40)), {
    effects: DESK_EFFECTS,
  });
  const flow = cands.find((c) =>
    c.type === "dataflow" && c.key[2] === "user_id" &&
    c.key[1] === "find_user>list_orders"
  )!;
  assertEquals(flow.grade, "E2");
  assertOk(flow.evidence.variety >= 10);
  // Three episodes that all cancel: the constant reason is seen three times.
  const cancelling = normalizeAll(await deskEpisodes(40)).filter((e) =>
    e.steps.some((s) => s.logical_tool === "cancel")
  ).slice(0, 3);
  assertEquals(cancelling.length, 3);
  const few = consolidate(cancelling, { effects: DESK_EFFECTS });
  const constant = few.find((c) =>
    c.type === "constant" && c.claim.value === "customer_request"
  );
  assertOk(constant, "the constant reason was not found");
  assertOk(["E0", "E1"].includes(constant.grade), constant.grade);
  for (const c of cands) assertOk(!["E4", "E5"].includes(c.grade));
});

Deno.test("compiling twice gives byte-identical packages", async () => {
  const episodes = await deskEpisodes(80);
  const a = JSON.stringify(
    compileBehavior(episodes, {
      name: "desk",
      effects: DESK_EFFECTS,
      contracts: CONTRACTS,
    }).package,
  );
  const b = JSON.stringify(
    compileBehavior([...episodes].reverse(), {
      name: "desk",
      effects: DESK_EFFECTS,
      contracts: CONTRACTS,
    }).package,
  );
  assertEquals(a, b);
});

Deno.test("compileBehavior() chooses the form before building: the agent form builds no tree, a clean tree builds no agent form", async () => {
  const episodes = await deskEpisodes(30);
  const stagesOf = (form: "auto" | "tree" | "agent") => {
    const stages = new Set<string>();
    const r = compileBehavior(episodes, {
      name: "desk",
      effects: DESK_EFFECTS,
      form,
      onProgress: (stage) => stages.add(stage),
    });
    return { root: r.compiled.ir.nodes[r.compiled.ir.root].kind, stages };
  };
  const agent = stagesOf("agent");
  assertEquals(agent.root, "agent");
  assertEquals([...agent.stages], ["normalize", "agent form", "package"]);
  for (const form of ["auto", "tree"] as const) {
    const tree = stagesOf(form);
    assertEquals(tree.root, "sequence");
    assertEquals([...tree.stages], [
      "normalize",
      "facts",
      "consolidate",
      "staticize",
      "verify",
      "package",
    ]);
  }
});

Deno.test("held-out: compiled on 80% of episodes, the package reproduces the other 20% exactly", async () => {
  const episodes = await deskEpisodes(250);
  const train = episodes.filter((_, i) => i % 5 !== 0);
  const held = normalizeAll(episodes.filter((_, i) => i % 5 === 0));
  const r = compileBehavior(train, {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: CONTRACTS,
  });
  const report = verify(r.compiled, held, { effects: DESK_EFFECTS });
  const rate = report.replay_passed / report.replay_checks;
  console.log(
    `held-out replay: ${report.replay_passed}/${report.replay_checks} checks (${
      (rate * 100).toFixed(1)
    }%) over ${held.length} unseen episodes`,
  );
  assertEquals(rate, 1);
});

Deno.test("structural verification catches a ref to a store nothing wrote, and a missing capability", async () => {
  const r = compileBehavior(await deskEpisodes(40), {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: CONTRACTS,
  });
  const broken = structuredClone(r.compiled);
  const refund = Object.values(broken.ir.nodes).find((n) =>
    n.kind === "action" && n.tool === "refund"
  ) as Extract<IrNode, { kind: "action" }>;
  refund.args.amount = { ref: "nowhere_9.total" };
  const report = verify(broken, r.normalized, {
    requiredCapabilities: new Set(["find_user"]),
    effects: DESK_EFFECTS,
  });
  assertEquals(report.structural_ok, false);
  assertOk(report.structural_problems.some((p) => /nowhere_9/.test(p)));
  assertOk(
    report.structural_problems.some((p) =>
      /refund is not in the capability set/.test(p)
    ),
  );
});

Deno.test("CaptureCoordinator.compile() writes the package under the store and records it; a lost index finds it again", async () => {
  const { CaptureCoordinator } = await import(
    "../../lib/control/coordinator.ts"
  );
  await using dir = await tempDir();
  let digest: string;
  {
    using store = new HarnessStore(dir.path);
    generateDeskEpisodes(store.sink("desk"), "desk", 60);
    const r = await new CaptureCoordinator(store).compile(["desk"], {
      name: "desk",
      effects: DESK_EFFECTS,
      contracts: CONTRACTS,
    });
    digest = r.package.digest;
    assertEquals(r.registered, true);
    assertOk(r.file.startsWith(`${dir.path}/packages/desk-`));
    assertEquals(store.listPackages().map((p) => p.package_id), [digest]);
    assertEquals(JSON.parse(Deno.readTextFileSync(r.file)).digest, digest);
  }
  await Deno.remove(`${dir.path}/harness.db`);
  using store = new HarnessStore(dir.path);
  assertEquals(store.listPackages().map((p) => p.package_id), [digest]);
});
