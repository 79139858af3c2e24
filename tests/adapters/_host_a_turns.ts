/**
 * Shared setup for the host_a turn tests (`host_a_*_test.ts` on when a
 * turn is read and counted): the basic scenario's session transcript, and
 * that transcript cut just before its final answer, and a hook posted with
 * its transcript read.
 */
import { assertEquals } from "../_assert.ts";
import {
  assistantTurns,
  type TranscriptOptions,
  withTranscript,
} from "../../lib/forwarder/transcript.ts";
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

/** One hook payload for {@linkcode postHook}. */
export interface PostHookOptions {
  /** Capture the hook is recorded in. */
  captureId: string;
  /** The payload's name, for the failure message. */
  name: string;
  /** The payload as JSON text. */
  body: string;
  /** How `withTranscript()` reads the transcript. */
  read: TranscriptOptions;
}

/**
 * Read the transcript for a host_a hook payload with `withTranscript()` and
 * post it to the server's hook route; the server must take it (204).
 *
 * @param url The server's base URL.
 * @param options Capture, payload and how the transcript is read.
 */
export async function postHook(
  url: string,
  options: PostHookOptions,
): Promise<void> {
  const { captureId, name, body, read } = options;
  const sent = await withTranscript("host_a", body, read);
  const res = await fetch(`${url}/hook/host_a?cap=${captureId}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: sent,
  });
  assertEquals(res.status, 204, `${name}: ${await res.text()}`);
}
