/**
 * host_a turns the host writes after a Stop's read: a later read (the next
 * Stop, SessionEnd) counts them once and says their text once, and a model
 * message whose records two reads split is counted once.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { forwardHook } from "../../lib/forwarder/forward.ts";
import { assistantTurns } from "../../lib/forwarder/transcript.ts";
import {
  assistantTexts,
  captureEvents,
  copyTranscripts,
  HOST_A,
  payloads,
  tokenSums,
} from "./_host_a_replay.ts";
import {
  BASIC_TRANSCRIPT,
  basicBeforeAnswer,
  postHook,
} from "./_host_a_turns.ts";

Deno.test("a turn written after the wait ran out is counted at the next read and its text is said once (twosessions)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("twosessions", dir.path);
  const name = "04452fac-0aa1-4d71-90d7-c6aa94f168c5.jsonl";
  const path = `${dir.path}/${name}`;
  const full = Deno.readTextFileSync(path);
  // The host writes the first answer of the resumed session too late.
  const first = assistantTurns(full.split("\n"))
    .find((t) => t.text === "The marker says session-one.")!;
  const at = full.lastIndexOf("\n", full.indexOf(first.message_id)) + 1;
  // What the host writes once the session is resumed (015) comes after.
  const sent = payloads("twosessions", dir.path);
  const prompt = JSON.parse(sent.find((p) => p.name.startsWith("016"))!.body)
    .prompt as string;
  const resume = full.lastIndexOf(
    "\n",
    full.indexOf(JSON.stringify(prompt).slice(1, -1), at),
  ) + 1;
  assertOk(resume > at);
  Deno.writeTextFileSync(path, full.slice(0, at));
  for (const { name: file, body } of sent) {
    // The late answer is in the file by the SessionEnd (014) that reads it.
    if (file.startsWith("014")) {
      Deno.writeTextFileSync(path, full.slice(at, resume), { append: true });
    }
    if (file.startsWith("015")) {
      Deno.writeTextFileSync(path, full.slice(resume), { append: true });
    }
    await postHook(srv.url, {
      captureId: "cap_late",
      name: file,
      body,
      read: { stateDir: `${dir.path}/state`, maxWaitMs: 0 },
    });
  }
  const evs = await captureEvents(srv.store, "cap_late");
  const resumed = evs.filter((e) => e.episode_id === name.slice(0, -6));
  // Four model calls in the session's transcript, each counted once.
  assertEquals(tokenSums(resumed), [400, 80, 4]);
  assertEquals(assistantTexts(resumed), [
    "The marker says session-one.",
    "Appended in the continued session.",
  ]);
});

/**
 * A recorded assistant record that asks for a tool (denied's first turn):
 * no recorded scenario ends mid-turn, so this stands in for the turn a
 * session ended with Ctrl-C or `/exit` leaves after its last Stop (the
 * reader keeps only `type`, `message.id`, model, usage and content).
 */
function midTurnRecord(): { line: string; id: string } {
  const dir = `${HOST_A}/denied/_transcripts`;
  const [name] = [...Deno.readDirSync(dir)].map((e) => e.name);
  const line = Deno.readTextFileSync(`${dir}/${name}`).split("\n")
    .find((l) => l.includes('"type":"assistant"'))!;
  return { line: line + "\n", id: assistantTurns([line])[0].message_id };
}

Deno.test("SessionEnd counts a turn the host wrote after the last Stop, once (host_a basic, a session ended mid-turn)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  const path = `${dir.path}/${BASIC_TRANSCRIPT}`;
  const extra = midTurnRecord();
  const sent = payloads("basic", dir.path);
  const end = sent.find((p) => p.name.includes("SessionEnd"))!;
  // SessionEnd twice: the second read finds nothing new.
  for (const { name, body } of [...sent, end]) {
    if (
      name.includes("SessionEnd") &&
      !Deno.readTextFileSync(path).includes(extra.id)
    ) {
      Deno.writeTextFileSync(path, extra.line, { append: true });
    }
    const r = await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_end",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
    });
    assertOk(r.ok, `${name}: ${r.error}`);
  }
  assertEquals((await srv.store.verifyCapture("cap_end")).ok, true);
  const evs = await captureEvents(srv.store, "cap_end");
  // The five calls before the Stop and the one after it, each once.
  assertEquals(tokenSums(evs), [600, 120, 6]);
  const late = evs.filter((e) =>
    e.kind === "model.responded" &&
    (e.payload.response as { message_id: string }).message_id === extra.id
  );
  assertEquals(late.length, 1);
  // Read before the episode's end is recorded.
  const finished = evs.findIndex((e) => e.kind === "episode.finished");
  assertOk(evs.indexOf(late[0]) < finished);
  assertEquals(assistantTexts(evs).length, 2);
});

Deno.test("SessionEnd reads the final turn the Stop's wait missed, and says its text once (host_a basic)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  const path = `${dir.path}/${BASIC_TRANSCRIPT}`;
  const { head, tail } = basicBeforeAnswer();
  // The host writes the final answer only after Stop gave up waiting.
  Deno.writeTextFileSync(path, head);
  for (const { name, body } of payloads("basic", dir.path)) {
    if (name.includes("SessionEnd")) {
      Deno.writeTextFileSync(path, tail, { append: true });
    }
    await postHook(srv.url, {
      captureId: "cap_missed",
      name,
      body,
      read: { stateDir: `${dir.path}/state`, maxWaitMs: 0 },
    });
  }
  const evs = await captureEvents(srv.store, "cap_missed");
  assertEquals(tokenSums(evs), [500, 100, 5]);
  const said = assistantTexts(evs);
  assertEquals(said.length, 2);
  assertOk(said[1].startsWith("All done: read the notes (answer 42)"));
});

Deno.test("a model message whose records two reads split is counted once (host_a basic, Stop read between its text and its tool call)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  const path = `${dir.path}/${BASIC_TRANSCRIPT}`;
  const full = Deno.readTextFileSync(path);
  // The first message is two records (its text, then its tool call) with
  // one id and usage: cut the file between them.
  const first = assistantTurns(full.split("\n"))[0];
  const second = full.indexOf(
    first.message_id,
    full.indexOf(first.message_id) + 1,
  );
  const at = full.lastIndexOf("\n", second) + 1;
  Deno.writeTextFileSync(path, full.slice(0, at));
  for (const { name, body } of payloads("basic", dir.path)) {
    if (name.includes("SessionEnd")) {
      Deno.writeTextFileSync(path, full.slice(at), { append: true });
    }
    await postHook(srv.url, {
      captureId: "cap_split",
      name,
      body,
      read: { stateDir: `${dir.path}/state`, maxWaitMs: 0 },
    });
  }
  const evs = await captureEvents(srv.store, "cap_split");
  const ids = evs.filter((e) => e.kind === "model.responded").map((e) =>
    (e.payload.response as { message_id: string }).message_id
  );
  assertEquals(ids.filter((id) => id === first.message_id).length, 1);
  assertEquals(tokenSums(evs), [500, 100, 5]);
  assertEquals(assistantTexts(evs).length, 2);
});
