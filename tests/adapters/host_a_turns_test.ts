import { captureReportData } from "../../lib/report/capture_data.ts";
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { forwardHook } from "../../lib/forwarder/forward.ts";
import {
  assistantTurns,
  withTranscript,
} from "../../lib/forwarder/transcript.ts";
import { hostAToEvents } from "../../lib/adapters/host_a.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";
import { formatInspection } from "../../lib/cli/format_capture.ts";
import {
  assistantTexts,
  captureEvents,
  copyTranscripts,
  HOST_A,
  payloads,
  tokenSums,
} from "./_host_a_replay.ts";

const BASIC_TRANSCRIPT = "6186e4fd-8209-48a2-a8dd-8390b7ffa6cc.jsonl";

/** The host's own totals: the last `cost-state` of the session transcript. */
function hostTotals(scenario: string, transcript: string): [number, number] {
  const lines = Deno.readTextFileSync(
    `${HOST_A}/${scenario}/_transcripts/${transcript}`,
  ).split("\n").filter((l) => l.includes('"type":"cost-state"'));
  const usage = Object.values(
    JSON.parse(lines.at(-1)!).modelUsage as Record<
      string,
      { inputTokens: number; outputTokens: number }
    >,
  );
  return [
    usage.reduce((s, u) => s + u.inputTokens, 0),
    usage.reduce((s, u) => s + u.outputTokens, 0),
  ];
}

/** The basic transcript cut just before the final answer's first record. */
function basicBeforeAnswer(): { head: string; tail: string } {
  const full = Deno.readTextFileSync(
    `${HOST_A}/basic/_transcripts/${BASIC_TRANSCRIPT}`,
  );
  const last = assistantTurns(full.split("\n")).at(-1)!;
  const at = full.lastIndexOf("\n", full.indexOf(last.message_id)) + 1;
  return { head: full.slice(0, at), tail: full.slice(at) };
}

Deno.test("StopFailure keeps the tokens of the turn before the API failed and the text the user saw (host_a apierror)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("apierror", dir.path);
  for (const { name, body } of payloads("apierror", dir.path)) {
    const r = await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_err",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
    });
    assertOk(r.ok, `${name}: ${r.error}`);
  }
  assertEquals((await srv.store.verifyCapture("cap_err")).ok, true);
  const evs = await captureEvents(srv.store, "cap_err");
  // The transcript's one model call (its error turn is the host's own).
  assertEquals(tokenSums(evs), [100, 20, 1]);
  const failed = evs.find((e) => e.payload.type === "stop.failed")!;
  assertEquals(failed.payload.error, "unknown");
  assertEquals(
    failed.payload.last_message,
    "API Error: 400 lab: scripted API failure",
  );
  // The error text is what the host said, not a model answer.
  assertEquals(assistantTexts(evs), []);
  assertEquals(
    evs.filter((e) => e.kind === "model.responded").map((e) => e.source.model),
    ["claude-opus-5-5"],
  );
});

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
    const sent = await withTranscript("host_a", body, {
      stateDir: `${dir.path}/state`,
      sleep,
    });
    const res = await fetch(`${srv.url}/hook/host_a?cap=cap_race`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: sent,
    });
    assertEquals(res.status, 204, `${name}: ${await res.text()}`);
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
    const sent = await withTranscript("host_a", body, {
      stateDir: `${dir.path}/state`,
      maxWaitMs: 0,
    });
    const res = await fetch(`${srv.url}/hook/host_a?cap=cap_late`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: sent,
    });
    assertEquals(res.status, 204, `${file}: ${await res.text()}`);
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

Deno.test("a compaction's summariser calls are marked uncounted and capture inspect says the count is partial (host_a compact)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("compact", dir.path);
  for (const { name, body } of payloads("compact", dir.path)) {
    const r = await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_compact",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
    });
    assertOk(r.ok, `${name}: ${r.error}`);
  }
  assertEquals((await srv.store.verifyCapture("cap_compact")).ok, true);
  const evs = await captureEvents(srv.store, "cap_compact");
  const counted = tokenSums(evs);
  const [hostIn, hostOut] = hostTotals(
    "compact",
    "10fe1e4b-6b10-4916-92fb-69c993c98f30.jsonl",
  );
  // What hooks can see is less than what the host spent.
  assertEquals(counted, [200, 40, 2]);
  assertEquals([hostIn, hostOut], [400, 80]);
  const partial = evs.filter((e) => e.payload.type === "usage.partial");
  assertEquals(
    partial.map((e) => [e.payload.agent_id, e.payload.reason]),
    [
      ["ae23b322616a97400", "transcript_missing"],
      ["abbeb36ad5d0c7b6b", "transcript_missing"],
    ],
  );
  const inspection = await inspectCapture(srv.store, "cap_compact");
  assertEquals(inspection.episodes.length, 1);
  assertEquals(inspection.episodes[0].tokens, {
    input: 200,
    output: 40,
    responses: 2,
    partial: true,
  });
  assertOk(
    formatInspection("cap_compact", inspection).includes("200/40 (partial)"),
  );
  // The HTML report says so too, per episode and over the capture.
  const report = await captureReportData(srv.store, "cap_compact");
  assertEquals(report.episodes[0].tokens, {
    input: 200,
    output: 40,
    partial: true,
  });
  assertEquals(report.figures.tokens.partial, true);
});

Deno.test("capture inspect does not call a complete count partial (host_a basic)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  for (const { body } of payloads("basic", dir.path)) {
    await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_whole",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
    });
  }
  const inspection = await inspectCapture(srv.store, "cap_whole");
  assertEquals(inspection.episodes[0].tokens, {
    input: 500,
    output: 100,
    responses: 5,
  });
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
    const res = await fetch(`${srv.url}/hook/host_a?cap=cap_missed`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: await withTranscript("host_a", body, {
        stateDir: `${dir.path}/state`,
        maxWaitMs: 0,
      }),
    });
    assertEquals(res.status, 204, `${name}: ${await res.text()}`);
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
    const res = await fetch(`${srv.url}/hook/host_a?cap=cap_split`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: await withTranscript("host_a", body, {
        stateDir: `${dir.path}/state`,
        maxWaitMs: 0,
      }),
    });
    assertEquals(res.status, 204, `${name}: ${await res.text()}`);
  }
  const evs = await captureEvents(srv.store, "cap_split");
  const ids = evs.filter((e) => e.kind === "model.responded").map((e) =>
    (e.payload.response as { message_id: string }).message_id
  );
  assertEquals(ids.filter((id) => id === first.message_id).length, 1);
  assertEquals(tokenSums(evs), [500, 100, 5]);
  assertEquals(assistantTexts(evs).length, 2);
});
