import { assertEquals, assertOk } from "../_assert.ts";
import { sha256Digest } from "../../lib/trace/hash.ts";
import { canonicalJson } from "../../lib/trace/mod.ts";
import { BehaviorRuntime } from "../../lib/forms/tree/behavior_runtime.ts";
import { validatePackage } from "../../lib/forms/validate_package.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";

function packageWithReact(maxSteps: number): BehaviorPackage {
  const body = {
    schema_version: "harness.package.v1",
    manifest: {
      name: "lookup",
      version: "0.1.0",
      task_family: "",
      capture_fidelity: "F3",
      compiler_model_id: null,
      required_capabilities: ["search", "read"],
      effects: { search: "read", read: "read" },
      episodes: 0,
      promoted_to_e4: false,
    },
    ir: {
      schema_version: "harness.ir.v1",
      name: "lookup",
      root: "root",
      nodes: {
        root: { id: "root", kind: "sequence", children: ["r0"] },
        r0: {
          id: "r0",
          kind: "react",
          signature: "sig_r0",
          tools: ["search", "read"],
          max_steps: maxSteps,
          store: "answer",
        },
      },
      stores: ["answer"],
      variables: [],
      inputs: ["input.text"],
    },
    signatures: {
      sig_r0: {
        id: "sig_r0",
        kind: "react",
        inputs: {},
        outputs: { result: { type: "json" } },
        instructions: "find it",
      },
    },
    provenance: [],
    candidates: [],
    verification: {
      structural_ok: true,
      structural_problems: [],
      replay_checks: 0,
      replay_passed: 0,
      problems: [],
      episodes_replayed: 0,
      episodes_clean: 0,
    },
    sources: { digest: sha256Digest("[]"), episodes: [] },
  };
  return validatePackage({
    ...body,
    digest: sha256Digest(canonicalJson(body)),
  });
}

const tools = {
  search: (q: string) => ({ hits: [`doc-${q.length}`] }),
  read: (id: string) => ({ id, text: `contents of ${id}` }),
};

Deno.test("a react leaf runs a bounded model-driven tool loop over its toolset, traced", async () => {
  const model = {
    predict: () => ({}),
    react(_sig: unknown, ctx: { history: unknown[] }) {
      const h = ctx.history as { result: { hits?: string[] } }[];
      if (h.length === 0) {
        return { tool: "search", arguments: { q: "refund policy" } };
      }
      if (h.length === 1) {
        return { tool: "read", arguments: { id: h[0].result.hits![0] } };
      }
      return { done: true as const, result: { summary: "found" } };
    },
  };
  const events: { kind: string }[] = [];
  const r = await new BehaviorRuntime(packageWithReact(5), { tools, model })
    .run(
      { text: "what is the refund policy?" },
      { sink: { emit: (e) => events.push(e) }, captureId: "c", episodeId: "e" },
    );
  assertEquals(r.status, "completed");
  assertEquals(r.steps.map((s) => s.tool), ["search", "read"]);
  assertEquals(r.outputs.answer, { summary: "found" });
  assertEquals(r.model_calls.length, 3);
  assertOk(events.some((e) => e.kind === "toolset.exposed"));
});

Deno.test("a react leaf that runs out of steps, or asks for a tool outside its toolset, stops with a reason", async () => {
  const looping = {
    predict: () => ({}),
    react: () => ({ tool: "search", arguments: { q: "x" } }),
  };
  const r1 = await new BehaviorRuntime(packageWithReact(3), {
    tools,
    model: looping,
  }).run({ text: "?" });
  assertEquals(r1.status, "stopped");
  assertOk(/used its 3 steps/.test(r1.reason!));
  const rogue = {
    predict: () => ({}),
    react: () => ({ tool: "delete_everything", arguments: {} }),
  };
  const r2 = await new BehaviorRuntime(packageWithReact(3), {
    tools,
    model: rogue,
  }).run({ text: "?" });
  assertEquals(r2.status, "stopped");
  assertOk(/not in this leaf's toolset/.test(r2.reason!));
});
