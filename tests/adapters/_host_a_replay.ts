/**
 * Test helper: replay a recorded host_a scenario as the host would run it,
 * with its transcripts in a temp dir (the payloads' paths moved there).
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR } from "../_helpers.ts";
import { scenarioFiles } from "../_server.ts";
import { forwardHook } from "../../lib/forwarder/forward.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";

/** The recorded host_a scenarios. */
export const HOST_A = `${HOSTS_DIR}/host_a`;

/**
 * A scenario's payloads (file name and JSON text), transcript paths moved
 * to `dir`.
 *
 * @param scenario Scenario folder.
 * @param dir Where the transcripts are.
 * @returns The payloads in arrival order.
 */
export function payloads(
  scenario: string,
  dir: string,
): { name: string; body: string }[] {
  return scenarioFiles(`${HOST_A}/${scenario}`).map(({ name, body }) => {
    const p = body as Record<string, string>;
    for (const f of ["transcript_path", "agent_transcript_path"]) {
      if (typeof p[f] === "string") {
        p[f] = `${dir}/${p[f].slice(p[f].lastIndexOf("/") + 1)}`;
      }
    }
    return { name, body: JSON.stringify(p) };
  });
}

/**
 * Copy a scenario's recorded transcripts into `dir`.
 *
 * @param scenario Scenario folder.
 * @param dir Destination.
 */
export async function copyTranscripts(
  scenario: string,
  dir: string,
): Promise<void> {
  for (const e of Deno.readDirSync(`${HOST_A}/${scenario}/_transcripts`)) {
    await Deno.copyFile(
      `${HOST_A}/${scenario}/_transcripts/${e.name}`,
      `${dir}/${e.name}`,
    );
  }
}

/**
 * Every event of a capture.
 *
 * @param store The store.
 * @param cap Capture id.
 * @returns The events in order.
 */
export async function captureEvents(
  store: { readEvents(id: string): AsyncGenerator<TraceEvent> },
  cap: string,
): Promise<TraceEvent[]> {
  const out: TraceEvent[] = [];
  for await (const e of store.readEvents(cap)) out.push(e);
  return out;
}

/**
 * Input and output tokens over the model responses, and their count.
 *
 * @param evs Events.
 * @returns `[input, output, responses]`.
 */
export function tokenSums(
  evs: readonly { kind: string; payload: Record<string, unknown> }[],
): [number, number, number] {
  let i = 0, o = 0, n = 0;
  for (const e of evs) {
    if (e.kind !== "model.responded") continue;
    const u = (e.payload.response as {
      usage?: { input_tokens: number; output_tokens: number };
    }).usage;
    if (!u) continue;
    i += u.input_tokens;
    o += u.output_tokens;
    n++;
  }
  return [i, o, n];
}

/**
 * The assistant's texts, in order.
 *
 * @param evs Events.
 * @returns The texts.
 */
export function assistantTexts(
  evs: readonly { kind: string; payload: Record<string, unknown> }[],
): string[] {
  return evs.filter((e) =>
    e.kind === "message" && e.payload.role === "assistant"
  ).map((e) => e.payload.text as string);
}

/** Where {@linkcode forwardScenario} sends a scenario. */
export interface ForwardScenarioOptions {
  /** Scenario folder under {@linkcode HOST_A}. */
  scenario: string;
  /** Capture the hooks are recorded in. */
  captureId: string;
  /** Temp dir for the transcripts and the forwarder's state. */
  dir: string;
}

/**
 * Replay a scenario through the hook forwarder into a server: copy its
 * transcripts to `dir`, forward each payload (each must be taken), check
 * the capture's chain, and read its events.
 *
 * @param srv The server's URL and store.
 * @param options Scenario, capture and temp dir.
 * @returns The capture's events in order.
 */
export async function forwardScenario(
  srv: {
    url: string;
    store: {
      verifyCapture(id: string): Promise<{ ok: boolean }>;
      readEvents(id: string): AsyncGenerator<TraceEvent>;
    };
  },
  options: ForwardScenarioOptions,
): Promise<TraceEvent[]> {
  const { scenario, captureId, dir } = options;
  await copyTranscripts(scenario, dir);
  for (const { name, body } of payloads(scenario, dir)) {
    const r = await forwardHook("host_a", body, {
      url: srv.url,
      captureId,
      stateDir: `${dir}/state`,
      timeoutMs: 5000,
    });
    assertOk(r.ok, `${name}: ${r.error}`);
  }
  assertEquals((await srv.store.verifyCapture(captureId)).ok, true);
  return await captureEvents(srv.store, captureId);
}
