/**
 * Test helper: the recorded Claude Code `dataflow` variants
 * (`fixtures/hosts/host_a/dataflow/`, `RECORDING.md`): their payloads
 * through the real host_a adapter into a real store, the files each
 * session found and the report it wrote, and the package compiled from the
 * seven training variants as `compile.ts` compiles.
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { hostAToEvents } from "../../lib/adapters/claude_code.ts";
import { ToolCallCorrelator } from "../../lib/adapters/correlator.ts";
import { SessionMemory } from "../../lib/adapters/session_memory.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import type { Episode } from "../../lib/lineage/records.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles } from "../_server.ts";
import { markSucceeded } from "./_outcome.ts";

/** The recorded variants. */
export const DIR = `${HOSTS_DIR}/host_a/dataflow`;
/** The variants compiled from (v8 and v9 are held out). */
export const TRAINING = ["v1", "v2", "v3", "v4", "v5", "v6", "v7"];

/** What the recording script wrote beside a variant's payloads. */
export interface Workspace {
  cwd: string;
  files: Record<string, string>;
  report: { path: string; content: string };
}

/** A variant's `_workspace.json`. */
export function workspace(variant: string): Workspace {
  return JSON.parse(Deno.readTextFileSync(`${DIR}/${variant}/_workspace.json`));
}

/** The request the user typed in a variant's session. */
export function prompt(variant: string): string {
  const p = scenarioFiles(`${DIR}/${variant}`).find((f) =>
    (f.body as { hook_event_name: string }).hook_event_name ===
      "UserPromptSubmit"
  );
  return (p!.body as { prompt: string }).prompt;
}

/** The variants' sessions into one capture, each marked successful. */
export async function record(
  store: HarnessStore,
  variants: string[],
): Promise<Episode[]> {
  const sink = store.sink("cap");
  const adapter = {
    captureId: "cap",
    correlator: new ToolCallCorrelator(),
    sessions: new SessionMemory(),
  };
  for (const v of variants) {
    for (const f of scenarioFiles(`${DIR}/${v}`)) {
      for (const ev of hostAToEvents(f.body, adapter)) sink.emit(ev);
    }
  }
  markSucceeded(sink, await loadEpisodes(store, "cap"));
  return await loadEpisodes(store, "cap");
}

/** The package compiled from the training variants, as `compile.ts` compiles. */
export async function compileTraining(): Promise<
  ReturnType<typeof compileBehavior>
> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const episodes = await record(store, TRAINING);
  assertEquals(episodes.length, 7);
  return compileBehavior(episodes, { name: "dataflow" });
}
