/**
 * Shared setup for the host_a turn tests (`host_a_*_test.ts` on when a
 * turn is read and counted): the basic scenario's session transcript, and
 * that transcript cut just before its final answer.
 */
import { assistantTurns } from "../../lib/forwarder/transcript.ts";
import { HOST_A } from "./_host_a_replay.ts";

/** The file name of the basic scenario's session transcript. */
export const BASIC_TRANSCRIPT = "6186e4fd-8209-48a2-a8dd-8390b7ffa6cc.jsonl";

/** The basic transcript cut just before the final answer's first record. */
export function basicBeforeAnswer(): { head: string; tail: string } {
  const full = Deno.readTextFileSync(
    `${HOST_A}/basic/_transcripts/${BASIC_TRANSCRIPT}`,
  );
  const last = assistantTurns(full.split("\n")).at(-1)!;
  const at = full.lastIndexOf("\n", full.indexOf(last.message_id)) + 1;
  return { head: full.slice(0, at), tail: full.slice(at) };
}
