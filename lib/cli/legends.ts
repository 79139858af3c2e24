/**
 * One-line legends printed under the figures they explain: capture
 * fidelity (F0–F4, `lib/store/fidelity.ts`) and evidence grades (E0–E4,
 * `lib/forms/tree/consolidate.ts` and the promotion to E4).
 *
 * @module
 */

/** What each capture fidelity level means. */
export const FIDELITY_LEGEND: string =
  "fidelity: F0 no usable evidence, F1 messages, F2 tool calls, F3 state (snapshots or deltas, blackboard), F4 state plus model requests and answers (model requests and answers without state do not raise the level)";

/** What each evidence grade of a package node means. */
export const GRADE_LEGEND: string =
  "grades: E0 contested or seen once, E1 seen in 2+ episodes, E2 5+ episodes with variety, E3 backed by a contract (--contracts), E4 replayed clean on every episode";
