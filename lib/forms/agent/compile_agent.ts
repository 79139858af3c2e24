/**
 * The agent form's pipeline over normalized episodes: choose the tuning
 * parameters the caller left unset and judge the form by cross-validation
 * on the training episodes (`self_tuning.ts`, `self_validation.ts`), learn
 * bindings, build the lookups and the choice leaf (none of the lookups
 * when validation showed they save nothing), verify by the training
 * replay.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import type { CompiledForm } from "../form.ts";
import { checkStructure } from "../../package/structure_check.ts";
import { AGENT_KINDS } from "./agent_kinds.ts";
import { type AgentFormOptions, buildAgentForm } from "./build_agent_form.ts";
import { agentVerification } from "./agent_verify.ts";
import { validateAgentForm } from "./self_validation.ts";
import { tuneAgentForm } from "./self_tuning.ts";
import { newCompileMemo } from "./lookup_selection.ts";

/** Options of {@linkcode compileAgent}. */
export interface CompileAgentOptions extends AgentFormOptions {
  /**
   * Choose the tuning parameters left unset by cross-validation on the
   * training episodes (`self_tuning.ts`); false: build with the defaults.
   * @default true
   */
  tune?: boolean;
}

/**
 * Compile the agent form and verify it by its training replay.
 *
 * @param normalized Normalized episodes, sorted by id.
 * @param options Name, effects, tuning.
 * @returns The agent form, its candidates and its verification.
 */
export function compileAgent(
  normalized: NormEpisode[],
  options: CompileAgentOptions,
): CompiledForm {
  const { tune, ...rest } = options;
  const formOptions = { ...rest, memo: rest.memo ?? newCompileMemo() };
  const tuned = tune === false
    ? {
      options: formOptions,
      validation: validateAgentForm(normalized, formOptions),
      tuning: null,
    }
    : tuneAgentForm(normalized, formOptions);
  const validation = tuned.validation;
  // Never ship lookups that saved nothing on conversations they were not
  // built from: each costs a call and context, for no model call saved.
  const agent = buildAgentForm(normalized, {
    ...tuned.options,
    dropLookups: validation?.verdict === "saves nothing"
      ? `validation: on ${validation.episodes} training episodes, each held out in turn, the lookups served none of ${validation.calls} calls (${validation.extra_lookups} extra lookups)`
      : undefined,
  });
  const compiled = agent.compiled;
  const verification = agentVerification(
    agent.replays,
    checkStructure(
      compiled,
      new Set(compiled.required_capabilities),
      AGENT_KINDS,
    ),
  );
  return {
    compiled,
    candidates: agent.candidates,
    verification: {
      ...verification,
      validation,
      tuning: tuned.tuning,
      dropped: agent.dropped.slice(0, 200),
    },
  };
}
