/**
 * Call ids on the Gemini wire, where the API often gives none and the
 * client may add its own: the id the gateway records for a `functionCall`
 * (`host_call_id`), and which call a `functionResponse` answers.
 *
 * - A call's id is made from its place, always: `gc_<turn>_<k>_<h>`, where
 *   `turn` is the index of the model turn in `contents` (an answer is at the
 *   request's `contents.length`: the client sends it back there), `k` its
 *   place among that turn's calls, and `h` 8 hex digits of the SHA-256 of
 *   its name and arguments. The API's own `functionCall.id` is not used for
 *   it: Gemini CLI 0.61 writes an id of its own making
 *   (`<tool>_<time>_<n>`) into the call when it sends the model's turn back,
 *   so the same call would have no id in the answer and one in the next
 *   request; made from its place, it has the same id both times (the
 *   conversation's continuation is recognised by these ids). Two calls of
 *   one episode rarely share one (the same call at the same place of
 *   another conversation would: the second is then taken as recorded).
 * - A `functionResponse` answers a call of the model turn right before it:
 *   the call whose `functionCall.id` it names (the client's or the API's),
 *   else the first call of that turn with its name not answered yet (by
 *   order and name: the API wants the responses in the calls' order). A
 *   response that fits no call keeps its own id (or `gr_<turn>_<j>`): it
 *   links to nothing.
 *
 * @module
 */
import { canonicalJson } from "../../../trace/canonical_json.ts";
import { sha256Hex } from "../../../trace/hash.ts";

/**
 * The id of a call, from its place and content.
 *
 * @param turn Index of the model turn in `contents`.
 * @param k Its place among the turn's calls.
 * @param call Name and arguments.
 * @returns The id.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * import { placedCallId } from "./call_ids.ts";
 * const id = placedCallId(2, 0, { name: "read_file", args: { path: "a" } });
 * equal(id.startsWith("gc_2_0_"), true);
 * equal(id, placedCallId(2, 0, { name: "read_file", args: { path: "a" } }));
 * ```
 */
export function placedCallId(
  turn: number,
  k: number,
  call: { name: string; args: unknown },
): string {
  const h = sha256Hex(canonicalJson([call.name, call.args ?? null])).slice(
    0,
    8,
  );
  return `gc_${turn}_${k}_${h}`;
}

/** A call of a model turn, as the pairing sees it. */
export interface TurnCall {
  /** Its id (made from its place). */
  id: string;
  /** The `functionCall.id` it carried on the wire, if any. */
  wire_id: string | null;
  /** Tool name. */
  name: string;
}

/**
 * The calls each response of a user turn answers.
 *
 * @param calls The calls of the model turn before it (none when there is none).
 * @param responses The turn's `functionResponse`s: the id they name (if
 *   any) and their name.
 * @param turn Index of the user turn (for ids of responses that fit no call).
 * @returns One id per response, in order.
 *
 * @example
 * ```ts
 * import { deepEqual } from "node:assert/strict";
 * import { pairResponses } from "./call_ids.ts";
 * const calls = [
 *   { id: "gc_1_0_a", wire_id: null, name: "ls" },
 *   { id: "gc_1_1_b", wire_id: null, name: "cat" },
 *   { id: "gc_1_2_c", wire_id: "ls_9_2", name: "ls" },
 * ];
 * deepEqual(
 *   pairResponses(calls, [
 *     { id: "cat_1_0", name: "cat" },
 *     { id: null, name: "ls" },
 *     { id: "ls_9_2", name: "ls" },
 *   ], 3),
 *   ["gc_1_1_b", "gc_1_0_a", "gc_1_2_c"],
 * );
 * ```
 */
export function pairResponses(
  calls: readonly TurnCall[],
  responses: readonly { id: string | null; name: string | null }[],
  turn: number,
): string[] {
  const taken = new Set<string>();
  const out: (string | null)[] = responses.map((r) => {
    const call = r.id === null
      ? undefined
      : calls.find((c) => c.wire_id === r.id && !taken.has(c.id));
    if (!call) return null;
    taken.add(call.id);
    return call.id;
  });
  return responses.map((r, j) => {
    const named = out[j];
    if (named !== null) return named;
    const call = calls.find((c) =>
      !taken.has(c.id) && (r.name === null || c.name === r.name)
    );
    if (call) {
      taken.add(call.id);
      return call.id;
    }
    return r.id ?? `gr_${turn}_${j}`;
  });
}
