/**
 * host_a (Claude Code): the main agent's text that led to an Agent call is
 * recorded before the subagent's texts. The transcript grows as it did on
 * the recording machine: at SubagentStart the main transcript holds the
 * main agent's turn (its text and the Agent call), not yet the final
 * answer; the subagent's transcript is read at SubagentStop.
 *
 * The forwarder reads the main transcript at SubagentStart; until its
 * `TRANSCRIPT_HOOKS` lists SubagentStart, this test adds what that read
 * gives itself, with the forwarder's own reader and offsets.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { forwardHook } from "../../lib/forwarder/forward.ts";
import {
  TRANSCRIPT_HOOKS,
  withTranscript,
} from "../../lib/forwarder/transcript.ts";
import { tempDir } from "../_helpers.ts";
import {
  assistantTexts,
  captureEvents,
  copyTranscripts,
  HOST_A,
  payloads,
  tokenSums,
} from "./_host_a_replay.ts";

const MAIN = "79216a24-75a0-44ff-9150-723b5b279662.jsonl";
const AGENT = "agent-a04f0f20bee881c0d.jsonl";

/** The main transcript's lines written before the subagent's first record. */
function mainBeforeSubagent(): string {
  const dir = `${HOST_A}/subagent/_transcripts`;
  const first = JSON.parse(
    Deno.readTextFileSync(`${dir}/${AGENT}`).split("\n")[0],
  ).timestamp as string;
  const lines = Deno.readTextFileSync(`${dir}/${MAIN}`).split("\n");
  const cut = lines.findIndex((l) => {
    const t = l ? JSON.parse(l).timestamp : undefined;
    return typeof t === "string" && t >= first;
  });
  return lines.slice(0, cut).join("\n") + "\n";
}

/** A SubagentStart as the forwarder sends it once it reads there. */
async function readAtSubagentStart(
  body: string,
  stateDir: string,
): Promise<string> {
  if (TRANSCRIPT_HOOKS.includes("SubagentStart")) return body;
  const p = JSON.parse(body);
  const read = JSON.parse(
    await withTranscript(
      "host_a",
      JSON.stringify({ ...p, hook_event_name: "PreCompact" }),
      { stateDir },
    ),
  );
  return JSON.stringify({ ...p, harness_transcript: read.harness_transcript });
}

Deno.test("host_a: the main agent's text before an Agent call is stored before the subagent's text, each text once, tokens counted once (subagent, a growing transcript)", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  await copyTranscripts("subagent", dir.path);
  const full = Deno.readTextFileSync(`${dir.path}/${MAIN}`);
  Deno.writeTextFileSync(`${dir.path}/${MAIN}`, mainBeforeSubagent());
  const stateDir = `${dir.path}/state`;
  for (const { name, body } of payloads("subagent", dir.path)) {
    const sent = name.includes("SubagentStart")
      ? await readAtSubagentStart(body, stateDir)
      : body;
    const r = await forwardHook("host_a", sent, {
      url: srv.url,
      captureId: "order",
      stateDir,
      timeoutMs: 5000,
    });
    assertOk(r.ok, `${name}: ${r.error}`);
    // The rest of the main transcript is written while the subagent runs.
    if (name.includes("SubagentStart")) {
      Deno.writeTextFileSync(`${dir.path}/${MAIN}`, full);
    }
  }
  assertEquals((await srv.store.verifyCapture("order")).ok, true);
  const evs = await captureEvents(srv.store, "order");
  assertEquals(assistantTexts(evs), [
    "Delegating to a helper agent.",
    "3",
    "The helper says notes.txt has 3 lines.",
  ]);
  const said = evs.find((e) =>
    e.kind === "message" && e.payload.text === "Delegating to a helper agent."
  )!;
  assertEquals(said.payload.agent_id, undefined, "the main agent's");
  assertEquals(said.parent_event_id, null);
  // The main agent's two model calls and the subagent's two, once each.
  assertEquals(tokenSums(evs)[2], 4);
});
