/**
 * Runtime benchmark: per-node cost of executing a package without a sink
 * (beside the same tool calls made directly, in the same run), the event
 * rate with a store sink, and the model calls a compiled package needs per
 * episode against an agent that asks the model for every decision.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../lib/lineage/episodes.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import { BehaviorRuntime } from "../lib/forms/tree/behavior_runtime.ts";
import { createCapabilities } from "../examples/order_desk/capabilities.ts";
import { type BenchRow, printTable, rate } from "./_table.ts";

// Over 80 lines: the compared arms in order over one package and temp store.
/**
 * Run the runtime benchmark.
 *
 * @param runs Instances to run per mode.
 * @returns The rows printed.
 */
export async function runtimeBench(runs = 2000): Promise<BenchRow[]> {
  const root = await Deno.makeTempDir({ prefix: "harness_runtime_bench_" });
  try {
    const store = new HarnessStore(root);
    generateDeskEpisodes(store.sink("desk"), "desk", 200);
    const episodes = await loadEpisodes(store, "desk");
    const pkg = compileBehavior(episodes, {
      name: "desk",
      effects: DESK_EFFECTS,
      contracts: {
        "predicate|find_user>list_orders>get_order|get_order#0.status": [
          "policy",
        ],
      },
    }).package;
    // Baseline: the same tool calls, made directly by code.
    let t0 = performance.now();
    let directCalls = 0;
    for (let i = 0; i < runs; i++) {
      const c = createCapabilities({ episode: 2_000_000 + i });
      const t = c.tools as Record<
        string,
        (...a: unknown[]) => Record<string, unknown>
      >;
      const u = t.find_user(c.desk.state.user.email);
      const { orders } = t.list_orders(u.user_id) as {
        orders: { order_id: string; item: string }[];
      };
      const o = t.get_order(
        orders.find((x) => x.item === c.desk.target.item)!.order_id,
      ) as {
        order_id: string;
        status: string;
        total: number;
      };
      directCalls += 5;
      if (o.status === "delivered") {
        try {
          t.refund(o.order_id, o.total);
        } catch {
          t.refund(o.order_id, o.total);
          directCalls++;
        }
      } else t.cancel(o.order_id, "customer_request");
      t.notify(u.user_id, `Your order ${o.order_id} has been done.`);
    }
    const directS = (performance.now() - t0) / 1000;
    // The runtime without a sink.
    let nodes = 0;
    let modelCalls = 0;
    t0 = performance.now();
    for (let i = 0; i < runs; i++) {
      const c = createCapabilities({ episode: 2_000_000 + i });
      const r = await new BehaviorRuntime(pkg, c).run(c.input);
      nodes += r.steps.length;
      modelCalls += r.model_calls.length;
    }
    const plainS = (performance.now() - t0) / 1000;
    // The runtime with a store sink.
    const sink = store.sink("traced");
    let events = 0;
    t0 = performance.now();
    for (let i = 0; i < runs; i++) {
      const c = createCapabilities({ episode: 2_000_000 + i });
      const r = await new BehaviorRuntime(pkg, c).run(c.input, {
        sink,
        captureId: "traced",
        episodeId: `r${i}`,
      });
      events += r.events;
    }
    store.flush();
    const tracedS = (performance.now() - t0) / 1000;
    store.close();
    // An agent that asks the model for every decision: one call per tool call, plus the answer.
    const agentCalls = episodes.reduce(
      (a, e) =>
        a + e.events.filter((x) => x.kind === "tool.call.started").length + 1,
      0,
    ) / episodes.length;
    const perRun = modelCalls / runs;
    const rows: BenchRow[] = [
      {
        name: `direct tool calls (baseline), ${runs} instances`,
        value: `${((directS / directCalls) * 1e6).toFixed(2)} µs per call`,
      },
      {
        name: "runtime without a sink, per executed node",
        value: `${((plainS / nodes) * 1e6).toFixed(2)} µs (${
          (plainS / directS).toFixed(1)
        }x the direct calls)`,
      },
      {
        name: "runtime with a store sink",
        value: `${rate(events / tracedS)} events, ${
          ((tracedS / nodes) * 1e6).toFixed(2)
        } µs per node`,
      },
      {
        name: "model calls per episode: agent deciding every step",
        value: agentCalls.toFixed(2),
      },
      {
        name: "model calls per episode: compiled package",
        value: perRun.toFixed(2),
      },
      {
        name: "  reduction",
        value: `${(agentCalls / perRun).toFixed(1)}x fewer`,
      },
    ];
    printTable("Runtime", rows);
    return rows;
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

if (import.meta.main) await runtimeBench();
