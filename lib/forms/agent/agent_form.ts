/**
 * The agent form ({@linkcode AGENT_FORM}): lookups and a choice leaf
 * around the agent's own model, for conversations. Compiled by
 * `compile_agent.ts`, replayed by `agent_replay.ts`, run live as a
 * conversation (`run_conversation.ts` over `Conversation`), served at the
 * model API by `GatewayDriver`.
 *
 * @module
 */
import { assertServable } from "../unservable_error.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import { agentTuning, type Form } from "../form.ts";
import { type AgentReplay, replayAgent } from "./agent_replay.ts";
import { compileAgent } from "./compile_agent.ts";
import { GatewayDriver } from "./gateway_driver.ts";
import { type ConversationRun, runConversation } from "./run_conversation.ts";

/**
 * Describe a conversation for people: its status and its counts.
 *
 * @param r The conversation's result.
 * @param pkg The package.
 * @returns The lines.
 */
function describeConversation(
  r: ConversationRun,
  pkg: BehaviorPackage,
): string[] {
  const s = r.stats;
  const refused = r.refused
    ? ` with ${r.refused} refused call${
      r.refused === 1 ? "" : "s"
    } (not made, whatever the replies say)`
    : "";
  return [
    `conversation with ${pkg.manifest.name}: ${r.status}${refused}${
      r.reason ? ` (${r.reason})` : ""
    }, ${r.turns} user messages`,
    `  model requests: ${s.model_requests} (${s.prompt_tokens} prompt + ${s.completion_tokens} completion tokens)`,
    `  tool calls: ${s.tool_calls} (lookups ${s.lookups}, ${s.lookups_shown} shown; reads served from lookups ${s.served}; writes ${s.writes}; refused ${s.refused})`,
  ];
}

/** The agent form. */
export const AGENT_FORM: Form<"agent", ConversationRun, AgentReplay> = {
  name: "agent",
  conversation: true,
  owns: (ir) => ir.nodes[ir.root]?.kind === "agent",
  compile: (normalized, options) => {
    options.onProgress?.("agent form", 0, 1);
    return compileAgent(normalized, {
      name: options.name,
      effects: options.effects,
      ...agentTuning(options),
    });
  },
  replay: (compiled, options) => replayAgent(compiled.ir, options),
  run: runConversation,
  describe: describeConversation,
  serve: (pkg) => {
    assertServable(pkg);
    return new GatewayDriver(pkg);
  },
};
