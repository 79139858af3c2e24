import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles } from "../_server.ts";
import { startServer } from "../_server.ts";
import { forwardHook } from "../../lib/forwarder/forward.ts";
import {
  assistantTurns,
  withTranscript,
} from "../../lib/forwarder/transcript.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";

const A = `${HOSTS_DIR}/host_a`;

interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** A scenario's payloads with their transcript paths moved to `dir`. */
function payloads(scenario: string, dir: string): string[] {
  return scenarioFiles(`${A}/${scenario}`).map(({ body }) => {
    const p = body as Record<string, string>;
    for (const f of ["transcript_path", "agent_transcript_path"]) {
      if (typeof p[f] === "string") {
        p[f] = `${dir}/${p[f].slice(p[f].lastIndexOf("/") + 1)}`;
      }
    }
    return JSON.stringify(p);
  });
}

async function copyTranscripts(scenario: string, dir: string) {
  for (const e of Deno.readDirSync(`${A}/${scenario}/_transcripts`)) {
    await Deno.copyFile(
      `${A}/${scenario}/_transcripts/${e.name}`,
      `${dir}/${e.name}`,
    );
  }
}

async function events(
  store: { readEvents(id: string): AsyncGenerator<TraceEvent> },
  cap: string,
): Promise<TraceEvent[]> {
  const out: TraceEvent[] = [];
  for await (const e of store.readEvents(cap)) out.push(e);
  return out;
}

function tokenSums(evs: TraceEvent[]): [number, number, number] {
  let i = 0, o = 0, n = 0;
  for (const e of evs) {
    if (e.kind !== "model.responded") continue;
    const u = (e.payload.response as { usage?: Usage }).usage;
    if (!u) continue;
    i += u.input_tokens;
    o += u.output_tokens;
    n++;
  }
  return [i, o, n];
}

Deno.test("assistantTurns() merges the records of one message and keeps its usage and text", () => {
  const lines = Deno.readTextFileSync(
    `${A}/basic/_transcripts/6186e4fd-8209-48a2-a8dd-8390b7ffa6cc.jsonl`,
  ).split("\n");
  const turns = assistantTurns(lines);
  assertEquals(turns.length, 5);
  assertEquals(turns[0].text, "I will read the notes first.");
  assertEquals(turns[0].tool_use_ids.length, 1);
  assertEquals(
    turns.reduce((s, t) => s + (t.usage?.input_tokens as number), 0),
    500,
  );
});

Deno.test("withTranscript() sends only what the transcript gained since the last read", async () => {
  await using dir = await tempDir();
  const state = `${dir.path}/state`;
  const name = "04452fac-0aa1-4d71-90d7-c6aa94f168c5.jsonl";
  const full = Deno.readTextFileSync(`${A}/twosessions/_transcripts/${name}`);
  // The transcript as it stood at the first Stop: up to its first stop summary.
  const cut = full.indexOf("\n", full.indexOf('"subtype":"stop_hook_summary"'));
  const path = `${dir.path}/${name}`;
  Deno.writeTextFileSync(path, full.slice(0, cut + 1));
  const stop = JSON.stringify({
    session_id: "s1",
    hook_event_name: "Stop",
    transcript_path: path,
  });
  const first = JSON.parse(
    await withTranscript("host_a", stop, { stateDir: state }),
  );
  Deno.writeTextFileSync(path, full.slice(cut + 1), { append: true });
  const second = JSON.parse(
    await withTranscript("host_a", stop, { stateDir: state }),
  );
  const third = JSON.parse(
    await withTranscript("host_a", stop, { stateDir: state }),
  );
  assertEquals(first.harness_transcript.turns.length, 2);
  assertEquals(
    second.harness_transcript.from_offset,
    new TextEncoder().encode(full.slice(0, cut + 1)).length,
  );
  assertEquals(second.harness_transcript.turns.length, 2);
  assertEquals(third.harness_transcript.turns.length, 0);
  const ids = [
    ...first.harness_transcript.turns,
    ...second.harness_transcript.turns,
  ]
    .map((t: { message_id: string }) => t.message_id);
  assertEquals(new Set(ids).size, 4);
});

Deno.test("withTranscript() leaves other hooks and other hosts untouched and says when the transcript is missing", async () => {
  await using dir = await tempDir();
  const pre = Deno.readTextFileSync(`${A}/basic/003-PreToolUse.json`);
  assertEquals(
    await withTranscript("host_a", pre, { stateDir: dir.path }),
    pre,
  );
  const stop = Deno.readTextFileSync(`${A}/basic/015-Stop.json`);
  assertEquals(
    await withTranscript("host_b", stop, { stateDir: dir.path }),
    stop,
  );
  // The recorded path does not exist here: said so, never a failure.
  assertEquals(
    JSON.parse(await withTranscript("host_a", stop, { stateDir: dir.path })),
    {
      ...JSON.parse(stop),
      harness_transcript: {
        field: "transcript_path",
        from_offset: 0,
        to_offset: 0,
        turns: [],
        missing: true,
      },
    },
  );
});

Deno.test("forwardHook() gives host_a episodes the tokens the host reported and the assistant's text", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  for (const body of payloads("basic", dir.path)) {
    const r = await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_t",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
    });
    assertOk(r.ok, r.error);
  }
  const evs = await events(srv.store, "cap_t");
  // The transcript's cost-state: 500 input, 100 output tokens over 5 messages.
  assertEquals(tokenSums(evs), [500, 100, 5]);
  const said = evs.filter((e) =>
    e.kind === "message" && e.payload.role === "assistant"
  )
    .map((e) => e.payload.text as string);
  assertEquals(said[0], "I will read the notes first.");
  assertOk(said.at(-1)!.startsWith("All done: read the notes (answer 42)"));
  assertEquals(said.length, 2);
});

Deno.test("forwardHook() reads no transcript when host_a's model calls go through this server's gateway (ANTHROPIC_BASE_URL): the gateway records the turns", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  for (const body of payloads("basic", dir.path)) {
    const r = await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_gw",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
      modelBaseUrl: srv.url,
    });
    assertOk(r.ok, r.error);
  }
  const evs = await events(srv.store, "cap_gw");
  // No turn from the transcript: no tokens, only the Stop's own text.
  assertEquals(tokenSums(evs), [0, 0, 0]);
  assertEquals(
    evs.filter((e) => e.kind === "message" && e.payload.role === "assistant")
      .length,
    1,
  );
  // No offset state was written: the transcript was never opened.
  let state: string[] = [];
  try {
    state = [...Deno.readDirSync(`${dir.path}/state`)].map((e) => e.name);
  } catch { /* never made */ }
  assertEquals(state, []);
});

Deno.test("forwardHook() adds a subagent's own transcript at SubagentStop: the session's total", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("subagent", dir.path);
  for (const body of payloads("subagent", dir.path)) {
    await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_s",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
    });
  }
  const evs = await events(srv.store, "cap_s");
  // The host's cost-state for the session: 400 in, 80 out.
  assertEquals(tokenSums(evs), [400, 80, 4]);
  const sub = evs.filter((e) =>
    e.kind === "model.responded" && e.payload.agent_id
  );
  assertEquals(sub.length, 2);
});

Deno.test("the ingest server never opens a transcript path that arrives in a request body", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  // Posted straight to the server (no forwarder): the path is there, readable.
  for (const body of payloads("basic", dir.path)) {
    const res = await fetch(`${srv.url}/hook/host_a?cap=cap_direct`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    await res.body?.cancel();
  }
  const evs = await events(srv.store, "cap_direct");
  assertOk(evs.length > 10);
  assertEquals(tokenSums(evs), [0, 0, 0]);
});
