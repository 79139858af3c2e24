/**
 * The agent form's pipeline over normalized episodes: judge the form on a
 * validation part of the training episodes (`self_validation.ts`), learn
 * bindings, build the lookups and the choice leaf (none of the lookups when
 * validation showed they save nothing), verify by the training replay.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import type { CompiledForm } from "../core/package.ts";
import { checkStructure } from "../core/verification.ts";
import { type AgentFormOptions, buildAgentForm } from "./agent_form.ts";
import { agentVerification } from "./agent_verify.ts";
import { validateAgentForm } from "./self_validation.ts";

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
  const validation = validateAgentForm(normalized, options);
  // Never ship lookups that saved nothing on conversations they were not
  // built from: each costs a call and context, for no model call saved.
  const agent = buildAgentForm(normalized, {
    ...options,
    dropLookups: validation?.verdict === "saves nothing"
      ? `validation: on ${validation.episodes} held-out training episodes the lookups served none of ${validation.calls} calls (${validation.extra_lookups} extra lookups)`
      : undefined,
  });
  const compiled = agent.compiled;
  const verification = agentVerification(
    agent.replays,
    checkStructure(compiled, new Set(compiled.required_capabilities)),
  );
  return {
    compiled,
    candidates: agent.candidates,
    verification: { ...verification, validation },
  };
}
