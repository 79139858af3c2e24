import { assertEquals, assertOk } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { splitByTask } from "../../eval/split_eval.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { replayAgent } from "../../lib/forms/agent/agent_replay.ts";
import { changesState } from "../../lib/package/tool_effects.ts";
import { Conversation } from "../../lib/forms/agent/conversation.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import { declareTool } from "../../lib/tool_gateway/parameters.ts";
import {
  scriptFromTau2,
  ScriptWalker,
  type Tau2Simulation,
} from "../../eval/scripted_model.ts";
import type {
  ChatModel,
  ChatRequest,
  ChatResponse,
} from "../../lib/models/chat_types.ts";
import type { EvalEpisode } from "../../eval/tau_data.ts";
import type { ToolRegistry } from "../../lib/runtime/runtime_types.ts";

const text = Deno.readTextFileSync(
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
);
const slice = loadTauData(text);
const simulations = JSON.parse(text).simulations as Tau2Simulation[];
const writes = new Set(
  Object.keys(slice.effects).filter((t) => changesState(slice.effects, t)),
);

/** The recorded agent as a chat model: the scripted walker, in process. */
function walkerModel(walker: ScriptWalker): ChatModel {
  return {
    id: "test/walker",
    complete(request: ChatRequest): Promise<ChatResponse> {
      const step = walker.next(request.messages);
      const done = "exhausted" in step;
      return Promise.resolve({
        content: done ? "###END###" : step.content,
        tool_calls: done ? [] : step.tool_calls,
        finish_reason: !done && step.tool_calls.length ? "tool_calls" : "stop",
        refusal: null,
        usage: null,
        model: "walker",
      });
    },
  };
}

/** Tools that answer from the episode: its result for the same call between the same writes. */
function recordedTools(e: EvalEpisode): ToolRegistry {
  const byKey = new Map<string, { ok: boolean; result: unknown }>();
  let epoch = 0;
  for (const s of e.norm.steps) {
    const k = `${epoch}\u0000${s.logical_tool}\u0000${
      canonicalJson(s.arguments)
    }`;
    if (!byKey.has(k)) byKey.set(k, { ok: s.ok, result: s.result });
    if (writes.has(s.logical_tool)) epoch++;
  }
  let live = 0;
  const tools: ToolRegistry = {};
  for (const t of Object.keys(slice.effects)) {
    tools[t] = declareTool((args: Record<string, unknown>) => {
      const hit = byKey.get(`${live}\u0000${t}\u0000${canonicalJson(args)}`);
      if (writes.has(t)) live++;
      if (!hit) throw new Error(`the episode never made ${t} here`);
      if (!hit.ok) throw new Error(String(hit.result));
      return hit.result;
    }, "object");
  }
  return tools;
}

Deno.test("the agent form behaves the same under replay and live: same lookups per tool, same writes, same stops", async () => {
  const { train, held } = splitByTask(slice.episodes, 3);
  const pkg = compileBehavior(
    train.filter((e) => e.norm.success === true).map((e) => e.norm),
    { name: "retail", effects: slice.effects },
  ).package;
  const ir = pkg.ir;
  const toolOf = (node: string) =>
    (ir.nodes[node] as unknown as { tool: string }).tool;
  let compared = 0;
  for (const e of held) {
    const i = slice.episodes.indexOf(e);
    const script = scriptFromTau2(simulations[i]);
    const replay = replayAgent(ir, { episode: e.norm, effects: slice.effects });
    const conv = new Conversation(pkg, { tools: recordedTools(e) }, {
      model: walkerModel(new ScriptWalker(script, { writes })),
    });
    let stopped = false;
    for (const u of script.users) {
      if (/###(STOP|TRANSFER|OUT-OF-SCOPE)###/.test(u)) break;
      const turn = await conv.user(u);
      if (turn.status === "stopped") {
        stopped = true;
        break;
      }
    }
    const replayLookups: Record<string, number> = {};
    for (const [node, c] of Object.entries(replay.by_node)) {
      replayLookups[toolOf(node)] = (replayLookups[toolOf(node)] ?? 0) +
        c.issued;
    }
    const liveLookups: Record<string, number> = {};
    for (const c of conv.calls.filter((c) => c.by === "lookup")) {
      liveLookups[c.tool] = (liveLookups[c.tool] ?? 0) + 1;
    }
    assertEquals(liveLookups, replayLookups, `${e.id}: lookups per tool`);
    const replayWrites = replay.verdicts.filter((v) => v === "choice").length;
    assertEquals(
      conv.calls.filter((c) => c.write).length,
      replayWrites,
      `${e.id}: writes made`,
    );
    assertEquals(stopped, replay.stop_reason !== null, `${e.id}: stopped`);
    compared++;
  }
  assertOk(compared >= 5, `only ${compared} held-out episodes compared`);
});
