/**
 * Shared helpers for the scripted model tests: the vendored τ² retail
 * slice, its write tools, its recorded results and lookups.
 *
 * @module
 */
import { assertOk } from "../_assert.ts";
import type { ChatMessage } from "../../lib/models/chat_types.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import type { Tau2Simulation } from "../../eval/scripted_model.ts";

const SLICE = new URL("../../fixtures/tau2_retail_slice.json", import.meta.url);
export const SIMS: Tau2Simulation[] = JSON.parse(
  await Deno.readTextFile(SLICE),
).simulations;

/** τ² retail's state-changing tools (write, plus the hand-over). */
export const WRITES = new Set([
  "cancel_pending_order",
  "exchange_delivered_order_items",
  "modify_pending_order_address",
  "modify_pending_order_items",
  "modify_pending_order_payment",
  "modify_user_address",
  "return_delivered_order_items",
  "transfer_to_human_agents",
]);

export const key = (name: string, args: unknown) =>
  `${name} ${canonicalJson(args)}`;

/** The recorded tool results of a simulation, by call, in order. */
export function recordedResults(
  sim: Tau2Simulation,
): { key: string; content: string }[] {
  const calls = new Map<string, string>();
  const out: { key: string; content: string }[] = [];
  for (const m of sim.messages as unknown as Array<Record<string, unknown>>) {
    for (
      const c of (m.tool_calls ?? []) as {
        id: string;
        name: string;
        arguments: unknown;
      }[]
    ) {
      calls.set(c.id, key(c.name, c.arguments));
    }
    if (m.role === "tool") {
      out.push({
        key: calls.get(m.id as string)!,
        content: m.content as string,
      });
    }
  }
  return out;
}

/** A lookup shown as the model's own call, with its recorded result. */
export function lookup(
  sim: Tau2Simulation,
  id: string,
  name: string,
  args: Record<string, unknown>,
): ChatMessage[] {
  const r = recordedResults(sim).find((x) => x.key === key(name, args));
  assertOk(r, `the simulation recorded ${name}`);
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id,
        name,
        arguments: args,
        raw_arguments: JSON.stringify(args),
      }],
    },
    { role: "tool", tool_call_id: id, name, content: r.content },
  ];
}
