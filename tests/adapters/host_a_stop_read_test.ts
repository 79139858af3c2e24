/**
 * What a host_a Stop reads of the session transcript: `withTranscript()`
 * waits, a bounded time, for the record carrying `last_assistant_message`
 * (and not for one an earlier hook already read), and `hostAToEvents()`
 * drops only the turn whose text the Stop itself says.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import {
  assistantTurns,
  withTranscript,
} from "../../lib/forwarder/transcript.ts";
import { hostAToEvents } from "../../lib/adapters/claude_code.ts";
import {
  assistantTexts,
  captureEvents,
  copyTranscripts,
  payloads,
  tokenSums,
} from "./_host_a_replay.ts";
import {
  BASIC_TRANSCRIPT,
  basicBeforeAnswer,
  postHook,
} from "./_host_a_turns.ts";

Deno.test("withTranscript() at Stop reads until the record carrying last_assistant_message arrives", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  const path = `${dir.path}/${BASIC_TRANSCRIPT}`;
  const { head, tail } = basicBeforeAnswer();
  // The host fires Stop before it has written the final answer.
  Deno.writeTextFileSync(path, head);
  const waits: number[] = [];
  const sleep = (ms: number) => {
    if (waits.push(ms) === 2) {
      Deno.writeTextFileSync(path, tail, { append: true });
    }
    return Promise.resolve();
  };
  for (const { name, body } of payloads("basic", dir.path)) {
    await postHook(srv.url, {
      captureId: "cap_race",
      name,
      body,
      read: { stateDir: `${dir.path}/state`, sleep },
    });
  }
  assertEquals(waits.length, 2);
  const evs = await captureEvents(srv.store, "cap_race");
  // The transcript's cost-state: 500 input, 100 output tokens over 5 calls.
  assertEquals(tokenSums(evs), [500, 100, 5]);
  const said = assistantTexts(evs);
  assertEquals(said.length, 2);
  assertEquals(said[0], "I will read the notes first.");
  assertOk(said[1].startsWith("All done: read the notes (answer 42)"));
});

Deno.test("withTranscript() waits a bounded time for a record that never comes", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/${BASIC_TRANSCRIPT}`;
  Deno.writeTextFileSync(path, basicBeforeAnswer().head);
  const stop = payloads("basic", dir.path).find((p) => p.name.includes("Stop"))!
    .body;
  let waited = 0;
  const sent = JSON.parse(
    await withTranscript("host_a", stop, {
      stateDir: `${dir.path}/state`,
      maxWaitMs: 100,
      sleep: (ms) => {
        waited += ms;
        return Promise.resolve();
      },
    }),
  );
  assertEquals(waited, 100);
  assertEquals(sent.harness_transcript.turns.length, 4);
});

Deno.test("withTranscript() does not wait for a record an earlier hook already read (a Stop after PreCompact, a replayed Stop)", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/${BASIC_TRANSCRIPT}`;
  const { head, tail } = basicBeforeAnswer();
  Deno.writeTextFileSync(path, head + tail);
  const stop = payloads("basic", dir.path).find((p) => p.name.includes("Stop"))!
    .body;
  let waited = 0;
  const options = {
    stateDir: `${dir.path}/state`,
    maxWaitMs: 100,
    sleep: (ms: number) => {
      waited += ms;
      return Promise.resolve();
    },
  };
  const first = JSON.parse(await withTranscript("host_a", stop, options));
  assertEquals(waited, 0, "the record is in the first read");
  assertOk(first.harness_transcript.turns.length > 0);
  // The same Stop again: the record was read by the first one.
  const again = JSON.parse(await withTranscript("host_a", stop, options));
  assertEquals(waited, 0, "no wait for a record read before");
  assertEquals(again.harness_transcript.turns.length, 0);
});

Deno.test("hostAToEvents() at Stop drops only the turn whose text is last_assistant_message", () => {
  const { head } = basicBeforeAnswer();
  const full = head + basicBeforeAnswer().tail;
  const stop = JSON.parse(
    payloads("basic", "/x").find((p) => p.name.includes("Stop"))!.body,
  );
  const map = (text: string) =>
    assistantTexts(hostAToEvents({
      ...stop,
      harness_transcript: {
        field: "transcript_path",
        turns: assistantTurns(text.split("\n")),
      },
    }, { captureId: "cap" }));
  // The final answer was read: it is said once.
  const whole = map(full);
  assertEquals(whole.length, 2);
  assertEquals(whole[0], "I will read the notes first.");
  // It was not read (the wait ran out): the earlier text is still kept.
  const cut = map(head);
  assertEquals(cut.length, 2);
  assertEquals(cut[0], "I will read the notes first.");
  assertEquals(cut[1], stop.last_assistant_message);
});
