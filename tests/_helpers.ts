/**
 * Test helpers: temp dirs and event contexts.
 *
 * @module
 */
import type { EventContext } from "../lib/trace/mod.ts";

/**
 * Make a fresh temp dir and return it with a disposer.
 *
 * @param prefix Name prefix.
 * @returns The path and an async disposer that removes it.
 */
export async function tempDir(
  prefix = "harness_test_",
): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * A deterministic event context (fixed clock and counter ids).
 *
 * @param captureId Capture id.
 * @param episodeId Episode id.
 * @returns The context.
 */
export function fixedContext(
  captureId: string,
  episodeId = "ep_1",
): EventContext {
  let n = 0;
  let t = Date.parse("2026-11-22T00:00:00.000Z");
  return {
    captureId,
    episodeId,
    source: { host: "harness", adapter: "test", model: null },
    now: () => new Date(t += 7),
    newId: () => `evt_${captureId}_${++n}`,
  };
}

/**
 * The recorded host payloads, vendored in the repository (see
 * `fixtures/hosts/README.md` for where they come from).
 */
export const HOSTS_DIR = new URL("../fixtures/hosts", import.meta.url).pathname;

/**
 * One user message as `/ingest` takes it (JSON text).
 *
 * @param id Event id (also the message text).
 * @param capture Capture id.
 * @returns The event as JSON.
 */
export function messageEventJson(id: string, capture: string): string {
  return JSON.stringify({
    schema_version: "harness.trace.v1",
    event_id: id,
    capture_id: capture,
    episode_id: "ep_1",
    timestamp: "2026-11-23T00:00:00.000Z",
    source: { host: "test", adapter: "test", model: null },
    actor: "user",
    kind: "message",
    parent_event_id: null,
    payload: { role: "user", text: id },
  });
}

/**
 * A server on 127.0.0.1 that accepts connections and never answers (a
 * "silent" server, for time-out tests). Disposing it closes the listener
 * and every connection it holds.
 *
 * @returns Its port and an async disposer.
 */
export function silentServer(): {
  port: number;
  [Symbol.asyncDispose](): Promise<void>;
} {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const c of listener) held.push(c);
    } catch { /* closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const c of held) c.close();
      await accepting;
    },
  };
}
