/**
 * What the model gateway needs of a compiled package to serve it inside an
 * unmodified agent ({@linkcode ServedPackage}): for each request, a
 * decision (answer the due lookups itself, forward with the state-changing
 * tools narrowed, or forward untouched because the package does not fit)
 * and a check of the calls the model answers with. Each form implements
 * it over its own engine (`lib/forms/tree/gateway_driver.ts`: the tree's
 * next call, the model at its leaves; `lib/forms/agent/gateway_driver.ts`:
 * due lookups, narrowed state-changing tools); the gateway only speaks the
 * wires.
 *
 * @module
 */
import type { NormRequest, NormToolCall } from "./wire_types.ts";

/** A tool call the package makes itself. */
export interface ServedCall {
  /** Tool name. */
  name: string;
  /** Arguments. */
  arguments: Record<string, unknown>;
}

/** The tools offered upstream, narrowed. */
export interface Narrowing {
  /** Tool name → its JSON schema (`parameters` / `input_schema`) narrowed now. */
  schemas: Record<string, unknown>;
  /** Tools not offered now (a restricted argument has no candidate yet). */
  hidden: string[];
}

/** What to do with one request. */
export type ServingDecision =
  | { kind: "serve"; calls: ServedCall[] }
  | { kind: "forward"; narrowing: Narrowing }
  | { kind: "skip"; reason: string };

/** One refused call. */
export interface Refusal {
  /** The call's id on the wire. */
  id: string;
  /** Tool. */
  tool: string;
  /** Why (said to the model as the tool's answer). */
  reason: string;
}

/** A package the gateway serves. */
export interface ServedPackage {
  /** `name@digest`, recorded with every answer it made. */
  readonly id: string;
  /**
   * Decide for one request, from its conversation.
   *
   * @param req The request as read.
   * @returns Serve, forward narrowed, or skip (with the reason).
   */
  decide(req: NormRequest): ServingDecision;
  /**
   * Check the model's answer: each state-changing call against the
   * candidates the conversation allows.
   *
   * @param req The request it answers.
   * @param calls The answer's tool calls.
   * @returns The refused calls (none: every call may reach the agent).
   */
  check(req: NormRequest, calls: NormToolCall[]): Refusal[];
}
