import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { NormStep } from "../../lib/lineage/records.ts";
import type { NormEpisode } from "../../lib/lineage/records.ts";
import {
  compileBehavior,
  type CompileResult,
} from "../../lib/compiler/compile_behavior.ts";
import { coreSteps } from "../../lib/forms/core_steps.ts";
import type { BehaviorIr } from "../../lib/package/ir.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import { recordedOutputs } from "../../lib/forms/tree/recorded_choice.ts";
import { verify } from "../../lib/forms/tree/verify.ts";
import { replayEpisode } from "../../lib/forms/tree/tree_replay.ts";
import { walkTree } from "../../lib/forms/tree/tree_engine.ts";
import { driveTree } from "../../lib/forms/tree/tree_drive.ts";
import { coverageOf } from "../../lib/forms/tree/coverage.ts";
import { BehaviorRuntime } from "../../lib/forms/tree/behavior_runtime.ts";
import type { ToolRegistry } from "../../lib/runtime/runtime_types.ts";
import type {
  ModelBinding,
  RunResult,
} from "../../lib/forms/tree/tree_run_types.ts";
import { canonicalJson } from "../../lib/trace/mod.ts";
import type { UnsealedEvent } from "../../lib/trace/event.ts";
import { tempDir } from "../_helpers.ts";

/** The order desk compiled from 60 recorded episodes (tree form). */
async function compileDesk(): Promise<CompileResult> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  const r = compileBehavior(await loadEpisodes(store, "desk"), {
    name: "order_desk",
    effects: DESK_EFFECTS,
  });
  assertEquals(r.package.ir.nodes[r.package.ir.root].kind, "sequence");
  return r;
}

type PredictNode = Extract<IrNode, { kind: "predict" }>;

/**
 * Live capabilities that answer from one recorded episode: each tool call
 * is answered by the episode's next core call (its recorded failed
 * attempts first, thrown with their codes; the noise calls the package
 * dropped are never asked for), and the model answers a predict leaf with
 * what the recording shows it chose. A call of another tool, or past the
 * episode's end, fails naming the episode's step as the verifier names it;
 * `strict`: so does a call whose arguments differ from the recorded ones.
 */
function fromEpisode(
  ep: NormEpisode,
  ir: BehaviorIr,
  options: { strict?: boolean } = {},
): { tools: ToolRegistry; model: ModelBinding; calls: string[] } {
  const core = coreSteps(ep, DESK_EFFECTS);
  let cursor = 0;
  let failed = 0; // recorded failed attempts of core[cursor] already answered
  const calls: string[] = [];
  const answer = (tool: string, args: Record<string, unknown>) => {
    calls.push(`${tool}(${canonicalJson(args)})`);
    const c = core[cursor];
    if (!c) throw new Error(`step end: the episode made no more calls`);
    if (
      c.step.logical_tool !== tool ||
      (options.strict &&
        canonicalJson(args) !== canonicalJson(c.step.arguments))
    ) {
      throw new Error(
        `step ${c.step.index}: the episode called ${c.step.logical_tool}(${
          canonicalJson(c.step.arguments)
        })`,
      );
    }
    if (failed < c.attempts - 1) {
      const code = c.recovered[failed++];
      throw Object.assign(new Error(`recorded ${code}`), { code });
    }
    cursor++;
    failed = 0;
    return c.step.result;
  };
  const tools: ToolRegistry = {};
  for (const tool of Object.keys(DESK_EFFECTS)) {
    tools[tool] = {
      params: "object",
      call: (args: Record<string, unknown>) => answer(tool, args),
    };
  }
  const leaves = Object.values(ir.nodes).filter((n): n is PredictNode =>
    n.kind === "predict"
  );
  const model: ModelBinding = {
    id: "the-recording",
    predict: (signature) =>
      recordedOutputs(
        leaves.find((n) => n.signature === signature.id)!,
        core[cursor]?.step,
      ),
  };
  return { tools, model, calls };
}

/** A live run traced into memory: the result and the nodes entered. */
async function runLive(
  r: CompileResult,
  ep: NormEpisode,
  options: { strict?: boolean } = {},
): Promise<{ run: RunResult; path: string[]; calls: string[] }> {
  const caps = fromEpisode(ep, r.package.ir, options);
  const events: UnsealedEvent[] = [];
  const input = ep.steps[0].state_before.input as { text: string };
  const run = await new BehaviorRuntime(r.package, caps).run(input, {
    sink: { emit: (e) => void events.push(e) },
    episodeId: ep.episode_id,
  });
  const path = events.filter((e) => e.kind === "node.enter").map((e) =>
    String(e.payload.node_id)
  );
  return { run, path, calls: caps.calls };
}

/** The arm each branch took: `branch→arm`, from the nodes entered. */
function armsOf(ir: BehaviorIr, path: string[]): string[] {
  return path.flatMap((id, i) =>
    ir.nodes[id].kind === "branch" ? [`${id}→${path[i + 1]}`] : []
  );
}

const sameStep = (s: RunResult["steps"][number]) => ({
  node_id: s.node_id,
  kind: s.kind,
  tool: s.tool,
  arguments: s.arguments,
  result: s.result,
});

Deno.test("walkTree() gives the same walk under recorded-episode replay and the live runtime answering from the episode", async () => {
  const r = await compileDesk();
  const arms = new Set<string>();
  let retried = 0;
  for (const ep of r.normalized.slice(0, 24)) {
    const replay = replayEpisode(r.compiled, ep, { effects: DESK_EFFECTS });
    assertEquals(replay.problems, [], ep.episode_id);
    const live = await runLive(r, ep);
    const w = replay.walk;
    assertEquals(live.run.status, w.status, ep.episode_id);
    assertEquals(w.status, "completed");
    assertEquals(live.run.reason, w.reason);
    assertEquals(live.path, w.path, ep.episode_id);
    const liveArms = armsOf(r.package.ir, live.path);
    assertEquals(liveArms, armsOf(r.package.ir, w.path));
    assertEquals(liveArms.length, 1);
    for (const a of liveArms) arms.add(a);
    assertEquals(live.run.steps.map(sameStep), w.steps.map(sameStep));
    assertEquals(
      live.run.model_calls.map((m) => [m.node_id, m.outputs]),
      w.model_calls.map((m) => [m.node_id, m.outputs]),
    );
    const { input: _in, ...replayOutputs } = w.board;
    assertEquals(live.run.outputs, replayOutputs);
    // Every live tool call is a replayed action, made as often as recorded.
    const core = coreSteps(ep, DESK_EFFECTS);
    const actions = w.steps.filter((s) => s.kind === "action");
    assertEquals(
      live.calls,
      actions.flatMap((s, i) =>
        Array(core[i].attempts).fill(
          `${s.tool}(${canonicalJson(s.arguments)})`,
        )
      ),
    );
    assertEquals(
      live.run.steps.filter((s) => s.kind === "action").map((s) => s.attempts),
      core.map((c) => c.attempts),
    );
    if (core.some((c) => c.attempts > 1)) retried++;
  }
  // Both arms of the refund/cancel branch, and a retried refund, were walked.
  assertEquals(arms.size, 2, [...arms].join(", "));
  assertOk(retried > 0, "no episode with a retry among the 24");
});

/** A copy of an episode with some of its steps changed or dropped. */
function tamper(
  ep: NormEpisode,
  change: (steps: NormStep[]) => NormStep[],
): NormEpisode {
  const steps = change(ep.steps.map((s) => new NormStep(structuredClone(s))));
  return Object.assign(Object.create(Object.getPrototypeOf(ep)), ep, {
    steps,
  });
}

function lastOf(steps: NormStep[], tool: string): number {
  return steps.findLastIndex((s) => s.logical_tool === tool);
}

Deno.test("verify() and the live runtime reject the same mismatching episode at the same step", async () => {
  const r = await compileDesk();
  const eps = r.normalized.slice(0, 6);
  const cases: [string, NormEpisode][] = eps.flatMap((ep) => [
    [
      "notify text",
      tamper(ep, (steps) => {
        const i = lastOf(steps, "notify");
        steps[i].arguments = { ...steps[i].arguments, text: "Sorted." };
        return steps;
      }),
    ],
    [
      "notify dropped",
      tamper(ep, (steps) => {
        steps.splice(lastOf(steps, "notify"), 1);
        return steps;
      }),
    ],
    [
      "user id",
      tamper(ep, (steps) => {
        const i = lastOf(steps, "find_user");
        steps[i].result = { ...(steps[i].result as object), user_id: "U-0" };
        return steps;
      }),
    ],
  ]);
  for (const [what, ep] of cases) {
    const report = verify(r.compiled, [ep], { effects: DESK_EFFECTS });
    assertEquals(report.episodes_clean, 0, `${what}: verify let it pass`);
    const first = report.problems[0];
    const vStep = /, step (\d+|end): /.exec(first)![1];
    const live = await runLive(r, ep, { strict: true });
    assertEquals(live.run.status, "failed", `${what}: the runtime ran it`);
    const lStep = /\(step (\d+|end): /.exec(live.run.reason!)![1];
    assertEquals(lStep, vStep, `${what}: ${first} / ${live.run.reason}`);
    // The same node: the runtime's failed action calls the tool verify names.
    const failed = live.run.steps.at(-1)!;
    assertOk(first.includes(failed.tool!), `${what}: ${first}`);
    // Held-out coverage, on the same engine, judges the same call wrong
    // (an episode that ends early is not wrong there: its calls were all made).
    const cov = coverageOf(r.compiled, { episode: ep, effects: DESK_EFFECTS });
    if (what === "notify dropped") {
      assertEquals([cov.wrong, cov.uncovered_after_divergence], [0, 0]);
    } else {
      assertEquals(cov.wrong, 1);
      assertOk(cov.wrong_calls[0].includes(`: ${failed.node_id} made`));
    }
  }
});

Deno.test("walkTree() stops at a fallback stop, on an unresolved ref, and retries only the codes recovery names", () => {
  const ir: BehaviorIr = {
    schema_version: "harness.ir.v1",
    name: "t",
    root: "root",
    nodes: {
      root: { id: "root", kind: "sequence", children: ["a", "b", "x"] },
      a: {
        id: "a",
        kind: "action",
        tool: "t1",
        args: { q: { ref: "input.text" } },
        store: "s_a",
        effect: "read",
        recovery: { retry_on: ["busy"], max_attempts: 3 },
      },
      b: {
        id: "b",
        kind: "branch",
        on: "s_a.kind",
        cases: [{ equals: "ok", then: "done" }],
        otherwise: "x",
      },
      done: {
        id: "done",
        kind: "action",
        tool: "t2",
        args: { id: { ref: "s_a.missing" } },
        store: "s_done",
        effect: "write",
        recovery: null,
      },
      x: { id: "x", kind: "stop", reason: "no case" },
    },
    stores: ["s_a", "s_done"],
    variables: [],
    inputs: ["input.text"],
  };
  const run = (kind: unknown, codes: (string | null)[]) => {
    const asked: string[] = [];
    const result = driveTree(
      walkTree(ir, { input: { text: "hi" }, signatures: {} }),
      (req) => {
        asked.push(
          req.kind === "call" ? `${req.tool}#${req.attempt}` : req.kind,
        );
        if (req.kind !== "call") return;
        const code = codes.shift();
        return code === undefined
          ? { ok: true, result: { kind } }
          : { ok: false, error: { message: "no", ...(code ? { code } : {}) } };
      },
    );
    return { result, asked };
  };
  const stop = run("odd", ["busy"]);
  assertEquals(stop.asked, ["t1#1", "t1#2", "branch"]);
  assertEquals([stop.result.status, stop.result.end, stop.result.reason], [
    "stopped",
    "stop_node",
    "no case",
  ]);
  assertEquals(stop.result.steps.map((s) => s.kind), ["action", "branch"]);
  const unresolved = run("ok", []);
  assertEquals(unresolved.asked, ["t1#1", "branch", "unresolved"]);
  assertEquals(unresolved.result.end, "refused");
  assertOk(/s_a\.missing does not resolve/.test(unresolved.result.reason!));
  const failed = run("ok", ["busy", "busy", "busy"]);
  assertEquals(failed.result.reason, "a: t1 failed (no) after 3 attempts");
  const other = run("ok", ["gone"]);
  assertEquals(other.asked, ["t1#1"]);
  assertEquals(other.result.reason, "a: t1 failed (no)");
  assertEquals(other.result.path, ["root", "a"]);
});

Deno.test("walkTree() runs only the tree form's node kinds: another form's node (a hand-mixed IR) is yielded as foreign and the walk stops there, whatever its kind", () => {
  for (const kind of ["lookup", "echo"]) {
    const ir: BehaviorIr = {
      schema_version: "harness.ir.v1",
      name: "t",
      root: "root",
      nodes: {
        root: { id: "root", kind: "sequence", children: ["other"] },
        other: { id: "other", kind, tool: "t1", args: [] },
      },
      stores: [],
      variables: [],
      inputs: [],
    };
    const asked: string[] = [];
    const result = driveTree(
      walkTree(ir, { input: { text: "hi" }, signatures: {} }),
      (req) => {
        asked.push(`${req.kind} ${req.node.id}`);
      },
    );
    assertEquals(asked, ["foreign other"]);
    assertEquals([result.status, result.end, result.node], [
      "stopped",
      "refused",
      "other",
    ]);
    assertOk(
      result.reason?.startsWith(
        `other: a ${kind} node is not the tree form's`,
      ),
      result.reason ?? "",
    );
  }
});
