/**
 * Test and bench helper: record real Claude Code (host_a) scenarios into one
 * capture the way the installed hook does, through the forwarder, which
 * reads the session transcripts the payloads name (copied to a temp dir).
 *
 * @module
 */
import { forwardHook } from "../../lib/forwarder/forward.ts";
import { HOSTS_DIR } from "../_helpers.ts";
import { scenarioFiles } from "../_server.ts";

/** The scenarios a report of a real capture shows: a failure, refusals, a subagent. */
export const HOST_A_SCENARIOS = ["basic", "denied", "subagent"];

/**
 * Forward every recorded payload of the scenarios to an ingest server.
 *
 * @param url The server's base URL.
 * @param dir A temp dir for the transcripts and the forwarder's state.
 * @param captureId The capture to record into.
 * @param scenarios Scenario folders under `fixtures/hosts/host_a`.
 */
export async function recordHostA(
  url: string,
  dir: string,
  captureId: string,
  scenarios: string[],
): Promise<void> {
  for (const scenario of scenarios) {
    const src = `${HOSTS_DIR}/host_a/${scenario}/_transcripts`;
    for (const e of Deno.readDirSync(src)) {
      await Deno.copyFile(`${src}/${e.name}`, `${dir}/${e.name}`);
    }
    for (const f of scenarioFiles(`${HOSTS_DIR}/host_a/${scenario}`)) {
      const p = f.body as Record<string, string>;
      for (const k of ["transcript_path", "agent_transcript_path"]) {
        if (p[k]) p[k] = `${dir}/${p[k].slice(p[k].lastIndexOf("/") + 1)}`;
      }
      await forwardHook("host_a", JSON.stringify(p), {
        url,
        captureId,
        stateDir: `${dir}/state`,
        timeoutMs: 5000,
      });
    }
  }
}
