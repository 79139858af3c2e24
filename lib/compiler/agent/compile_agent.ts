/**
 * The agent form's pipeline over normalized episodes: learn bindings,
 * build the lookups and the choice leaf, verify by the training replay.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import type { CompiledForm } from "../core/package.ts";
import { checkStructure } from "../core/verification.ts";
import { type AgentFormOptions, buildAgentForm } from "./agent_form.ts";
import { agentVerification } from "./agent_verify.ts";

/**
 * Compile the agent form and verify it by its training replay.
 *
 * @param normalized Normalized episodes, sorted by id.
 * @param options Name, effects, tuning.
 * @returns The agent form, its candidates and its verification.
 */
export function compileAgent(
  normalized: NormEpisode[],
  options: AgentFormOptions,
): CompiledForm {
  const agent = buildAgentForm(normalized, options);
  const compiled = agent.compiled;
  const verification = agentVerification(
    agent.replays,
    checkStructure(compiled, new Set(compiled.required_capabilities)),
  );
  return { compiled, candidates: agent.candidates, verification };
}
