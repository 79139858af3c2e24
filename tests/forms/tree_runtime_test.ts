import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { BehaviorRuntime } from "../../lib/forms/tree/behavior_runtime.ts";
import { MissingCapabilityError } from "../../lib/runtime/runtime_types.ts";
import {
  PackageError,
  validatePackage,
} from "../../lib/forms/validate_package.ts";
import {
  createCapabilities,
  deskModel,
} from "../../examples/order_desk/capabilities.ts";
import { tempDir } from "../_helpers.ts";

const CONTRACTS = {
  "predicate|find_user>list_orders>get_order|get_order#0.status": [
    "policy.md#refunds",
  ],
};

async function deskPackage(count = 200): Promise<BehaviorPackage> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", count);
  const eps = await loadEpisodes(store, "desk");
  return compileBehavior(eps, {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: CONTRACTS,
  }).package;
}

Deno.test("on new instances the package completes the task, calling the model only at the residual leaf", async () => {
  const pkg = validatePackage(JSON.parse(JSON.stringify(await deskPackage())));
  let succeeded = 0;
  for (let i = 0; i < 40; i++) {
    const caps = createCapabilities({ episode: 500_000 + i });
    const rt = new BehaviorRuntime(pkg, caps);
    const r = await rt.run(caps.input);
    assertEquals(r.status, "completed", `instance ${i}: ${r.reason}`);
    if (caps.outcome().success) succeeded++;
    assertEquals(r.model_calls.map((m) => m.node_id), ["p_n2_get_order"]);
    assertEquals(r.events, 0); // no sink, no events
    assertOk(r.steps.every((s) => s.kind !== "react"));
  }
  assertEquals(succeeded, 40);
});

Deno.test("a traced run emits canonical chained events, and its trace compiles again to the same behavior", async () => {
  const pkg = await deskPackage();
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const sink = store.sink("rt");
  for (let i = 0; i < 120; i++) {
    const caps = createCapabilities({ episode: 600_000 + i });
    const r = await new BehaviorRuntime(pkg, caps).run(caps.input, {
      sink,
      captureId: "rt",
      episodeId: `run_${i}`,
      outcome: caps.outcome,
    });
    assertEquals(r.status, "completed");
    assertOk(r.events > 10);
  }
  assertEquals((await store.verifyCapture("rt")).ok, true);
  const kinds = store.countsByKind("rt");
  for (
    const k of [
      "episode.started",
      "episode.finished",
      "node.enter",
      "node.exit",
      "tool.call.started",
      "tool.call.completed",
      "model.requested",
      "model.responded",
      "blackboard.write",
      "message",
      "annotation",
    ]
  ) assertOk(kinds[k] > 0, `no ${k} events`);
  const again = compileBehavior(await loadEpisodes(store, "rt"), {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: CONTRACTS,
  });
  assertEquals(again.package.ir.nodes, pkg.ir.nodes);
  assertEquals(
    again.verification.replay_passed,
    again.verification.replay_checks,
  );
});

Deno.test("a tampered package is refused with a clear error", async () => {
  const pkg = await deskPackage(60);
  const text = JSON.stringify(pkg).replace(
    '"customer_request"',
    '"customer_requesT"',
  );
  const err = assertThrows(
    () => validatePackage(JSON.parse(text)),
    PackageError,
  );
  assertOk(/digest mismatch/.test(err.message), err.message);
  assertThrows(
    () => validatePackage({ ...pkg, schema_version: "x" }),
    PackageError,
  );
});

Deno.test("a missing capability is refused before anything runs", async () => {
  const pkg = await deskPackage(60);
  const caps = createCapabilities({ episode: 700_000 });
  const { refund: _omit, ...tools } = caps.tools;
  const err = assertThrows(
    () => new BehaviorRuntime(pkg, { tools, model: deskModel }),
    MissingCapabilityError,
  );
  assertEquals((err as MissingCapabilityError).missing, ["refund"]);
  assertThrows(
    () => new BehaviorRuntime(pkg, { tools: caps.tools }),
    MissingCapabilityError,
  );
  assertEquals(
    caps.desk.state.orders.every((o) =>
      o.status === "delivered" || o.status === "pending"
    ),
    true,
  );
});

Deno.test("the runtime does not guess: an unknown branch value, a bad model answer and an unrecovered error stop with a reason", async () => {
  const pkg = await deskPackage(80);
  // A status no episode ever showed: the branch has no case, the fallback stops.
  const caps = createCapabilities({ episode: 800_001 });
  const onHold = {
    ...caps.tools,
    get_order: (order_id: string) => ({
      ...caps.desk.getOrder(order_id),
      status: "on_hold",
    }),
  };
  const r1 = await new BehaviorRuntime(pkg, { tools: onHold, model: deskModel })
    .run(caps.input);
  assertEquals(r1.status, "stopped");
  assertOk(/stop rather than guess/.test(r1.reason!), r1.reason!);
  assertEquals(r1.steps.map((s) => s.tool ?? s.kind), [
    "find_user",
    "list_orders",
    "predict",
    "get_order",
    "branch",
  ]);
  // A model answer outside the signature.
  const caps2 = createCapabilities({ episode: 800_002 });
  const r2 = await new BehaviorRuntime(pkg, {
    tools: caps2.tools,
    model: { predict: () => ({ index: "two" }) },
  }).run(caps2.input);
  assertEquals(r2.status, "stopped");
  assertOk(/does not fit the signature/.test(r2.reason!));
  // An index out of range: the ref does not resolve.
  const r3 = await new BehaviorRuntime(pkg, {
    tools: caps2.tools,
    model: { predict: () => ({ index: 99 }) },
  }).run(caps2.input);
  assertEquals(r3.status, "stopped");
  assertOk(/does not resolve/.test(r3.reason!));
  // A tool error the package knows no recovery for.
  const caps4 = createCapabilities({ episode: 800_003 });
  const broken = {
    ...caps4.tools,
    list_orders: () => {
      throw Object.assign(new Error("db down"), { code: "unavailable" });
    },
  };
  const r4 = await new BehaviorRuntime(pkg, { tools: broken, model: deskModel })
    .run(caps4.input);
  assertEquals(r4.status, "failed");
  assertOk(/list_orders failed \(db down\)/.test(r4.reason!));
});

Deno.test("bounded recovery retries a rate-limited refund", async () => {
  const pkg = await deskPackage(120);
  let limited = 0;
  for (let i = 0; i < 60 && limited < 3; i++) {
    const caps = createCapabilities({ episode: 810_000 + i });
    const r = await new BehaviorRuntime(pkg, caps).run(caps.input);
    const refund = r.steps.find((s) => s.tool === "refund");
    if (refund?.attempts === 2) {
      limited++;
      assertEquals(r.status, "completed");
      assertEquals(caps.outcome().success, true);
    }
  }
  assertOk(limited >= 1, "no rate-limited instance in 60");
});
