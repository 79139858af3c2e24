/**
 * What the agent form's training replay and bindings become in the
 * package: bindings as candidates with grades, and the verification
 * report.
 *
 * @module
 */
import type { Candidate } from "../../package/candidate.ts";
import type { Binding } from "./binding_types.ts";
import type { AgentReplay } from "./agent_replay.ts";
import type { VerificationReport } from "../../package/verification.ts";
import { describeSource } from "../../package/source.ts";

function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

/**
 * Grade of a binding: E2 with support ≥ 5 and variety ≥ 3, E1 when
 * deterministic, else E0 (contested).
 *
 * @param b The binding.
 * @returns The grade.
 */
export function gradeOf(b: Binding): string {
  const c = b.lookup.deterministic ? b.lookup : b.choice;
  if (!c.deterministic) return "E0";
  return c.explained >= 5 && b.variety >= 3 ? "E2" : "E1";
}

/**
 * Bindings as candidates (type `binding`, key `[tool, path]`), so explain
 * mode and the package list them like other facts.
 *
 * @param bindings Learned bindings.
 * @returns Candidates.
 */
export function bindingCandidates(bindings: Binding[]): Candidate[] {
  return bindings.map((b) => {
    const c = b.lookup.deterministic ? b.lookup : b.choice;
    return {
      candidate_id: `c_binding_${safe(b.tool)}_${safe(b.path)}`,
      type: "binding",
      key: [b.tool, b.path],
      claim: {
        lookup: b.lookup.deterministic ? b.lookup.sources : null,
        choice: b.choice.deterministic ? b.choice.sources : null,
        sources: c.sources.map(describeSource),
      },
      evidence: {
        applicable: b.applicable,
        support: c.explained,
        counterexamples: c.counterexamples,
        episodes: b.episodes,
        success_support: c.explained,
        fail_support: 0,
        variety: b.variety,
      },
      grade: gradeOf(b),
      status: c.counterexamples ? "contested" : "proposed",
      contract_sources: [],
    };
  });
}

/**
 * The verification report of an agent form from its training replay: a
 * check per step the package handles (lookups it served, choices it
 * allowed); a problem per refused training write.
 *
 * @param replays Training replays.
 * @param structural Structural problems.
 * @returns The report.
 */
export function agentVerification(
  replays: AgentReplay[],
  structural: string[],
): VerificationReport {
  const report: VerificationReport = {
    structural_ok: structural.length === 0,
    structural_problems: structural,
    replay_checks: 0,
    replay_passed: 0,
    problems: [],
    episodes_replayed: replays.length,
    episodes_clean: 0,
  };
  for (const r of replays) {
    const handled = r.verdicts.filter((v) => v !== "model").length;
    const passed = r.verdicts.filter((v) => v === "lookup" || v === "choice")
      .length;
    report.replay_checks += handled;
    report.replay_passed += passed;
    if (r.stop_reason) {
      report.problems.push(`${r.episode_id}: stopped: ${r.stop_reason}`);
    } else report.episodes_clean++;
  }
  return report;
}
