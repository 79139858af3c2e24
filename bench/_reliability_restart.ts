/**
 * Restart downtime (issue 44, item 8): a store whose open capture holds
 * many events (host hooks' tool calls and the model gateway's exchanges, a
 * realistic mix of about 750 bytes an event), then `ingest.ts serve` started
 * on it as users start it, timed from the spawn to the first answer of
 * `/health`, of a hook and of the restore's end. An empty store's start is
 * timed beside it (the process's own start-up: Deno and the module graph).
 * `deno task bench reliability` runs it; alone, `deno run -A
 * bench/_reliability_restart.ts [ROOT] [EVENTS]` fills ROOT once and
 * restarts on it three times.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import { annotation, episodeStarted } from "../lib/trace/episode_events.ts";
import { modelRequested, modelResponded } from "../lib/trace/model_events.ts";
import {
  toolCallCompleted,
  toolCallStarted,
} from "../lib/trace/tool_events.ts";
import type { UnsealedEvent } from "../lib/trace/event.ts";
import { serveArgs } from "./_serve_args.ts";

/** The capture the filler writes. */
export const RESTART_CAPTURE = "restart_big";

/**
 * Fill an open capture with `events` events: host_a sessions of tool calls
 * (a Bash command and its output) with, every tenth pair, a gateway model
 * request and answer in the same episode. Written through the store's sink
 * in runs of 5,000.
 *
 * @param root An empty folder for the store.
 * @param events How many events (at least).
 * @returns Events written and the spool's size in bytes.
 */
export function fillOpenCapture(
  root: string,
  events: number,
): { events: number; bytes: number } {
  using store = new HarnessStore(root, { role: "bench" });
  const sink = store.sink(RESTART_CAPTURE);
  let n = 0;
  let t = Date.parse("2026-11-22T00:00:00.000Z");
  const now = () => new Date(t += 3);
  const ctxOf = (episode: string, host: string) => ({
    captureId: RESTART_CAPTURE,
    episodeId: episode,
    source: { host, adapter: host, model: null },
    now,
  });
  sink.emit(
    annotation(ctxOf("_capture", "harness"), {
      type: "capture.started",
      label: "restart bench",
    }),
  );
  n++;
  let batch: UnsealedEvent[] = [];
  const flush = () => {
    if (batch.length) sink.emitMany(batch);
    n += batch.length;
    batch = [];
  };
  for (let s = 0; n + batch.length < events; s++) {
    const episode = `sess-${s.toString().padStart(6, "0")}`;
    const hook = ctxOf(episode, "host_a");
    const gw = {
      ...ctxOf(episode, "model_gateway"),
      source: {
        host: "model_gateway",
        adapter: "anthropic_messages",
        model: "claude-sonnet-4",
      },
    };
    let known = 0;
    let first = "";
    let previous: string | null = null;
    batch.push(episodeStarted(hook, { reason: "startup" }));
    for (let c = 0; c < 50 && n + batch.length < events; c++) {
      const command = `grep -rn "order ${c}" src/orders/ | head -${c + 5}`;
      const args = { command, description: `look for order ${c}` };
      const tool = { host_name: "Bash", logical_id: "Bash" };
      const start = toolCallStarted(hook, {
        tool,
        arguments: args,
        host_call_id: `toolu_${s}_${c}`,
      });
      batch.push(start);
      batch.push(
        toolCallCompleted(hook, {
          tool,
          arguments: args,
          host_call_id: `toolu_${s}_${c}`,
          result: {
            stdout: `src/orders/o${c}.txt:3: order ${c} shipped ${
              "to the customer at the address on file ".repeat(4)
            }`,
            stderr: "",
            interrupted: false,
          },
          duration_ms: 12,
        }, { parentEventId: start.event_id }),
      );
      if (c % 10 === 0) {
        // One conversation per session, each request continuing the last
        // (as the gateway records them: only the new messages' hashes).
        const fresh = Array.from(
          { length: known === 0 ? 3 : 2 },
          (_, k) => (s * 997 + c * 31 + k).toString(16).padStart(64, "0"),
        );
        const req = modelRequested(gw, {
          request: { model: "claude-sonnet-4", max_tokens: 1024 },
          conversation: {
            first: known === 0 ? fresh[0] : first,
            continues: known,
            previous: previous,
            new_hashes: fresh,
          },
          source: "model_gateway",
        });
        if (known === 0) first = fresh[0];
        known += fresh.length;
        previous = req.event_id;
        batch.push(req);
        batch.push(
          modelResponded(gw, {
            response: {
              text: `Order ${c} was shipped; I will check the next one.`,
              tool_call_ids: [`toolu_${s}_${c + 1}`],
              usage: { input_tokens: 2400, output_tokens: 40 },
            },
            source: "model_gateway",
          }, { parentEventId: req.event_id }),
        );
      }
      if (batch.length >= 5000) flush();
    }
  }
  flush();
  store.flush();
  return {
    events: n,
    bytes: Deno.statSync(store.spoolPath(RESTART_CAPTURE)).size,
  };
}

/** What one restart measured (milliseconds from the spawn). */
export interface RestartTimes {
  /** First `/health` answered. */
  health_ms: number;
  /** `/health` said the restore was done (the first answer, when it never said it was restoring). */
  restored_ms: number;
  /** A host_a hook sent right after the first answer was answered. */
  hook_ms: number;
  /** The hook's HTTP status. */
  hook_status: number;
  /** Whether `/health` said `restoring: true` at its first answer. */
  restoring_seen: boolean;
  /** `/health` asked during the restore: how many times, and the slowest answer. */
  health_during: { asks: number; slowest_ms: number };
}

async function askHealth(
  url: string,
): Promise<{ body: Record<string, unknown>; ms: number } | null> {
  const t = performance.now();
  try {
    const res = await fetch(`${url}/health`, {
      signal: AbortSignal.timeout(10_000),
    });
    const body = await res.json();
    return { body, ms: performance.now() - t };
  } catch {
    return null;
  }
}

function restoring(body: Record<string, unknown>): boolean {
  return (body.stats as Record<string, unknown> | undefined)?.restoring ===
    true;
}

/**
 * Start `ingest.ts serve` on a store and time its first answers. The port
 * is chosen before the spawn (a free one), so the prober knocks from the
 * first millisecond (a refused connection is retried after 5 ms).
 *
 * @param root The store.
 * @returns The times.
 */
export async function restartTimes(root: string): Promise<RestartTimes> {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const url = `http://127.0.0.1:${port}`;
  const args = serveArgs(root).map((a, i, all) =>
    all[i - 1] === "--port" ? String(port) : a
  );
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    let first = await askHealth(url);
    while (!first) {
      if (performance.now() - t0 > 120_000) {
        throw new Error("the server did not answer /health within 120 s");
      }
      await new Promise((r) => setTimeout(r, 5));
      first = await askHealth(url);
    }
    const health_ms = performance.now() - t0;
    // A hook as Claude Code sends it, into the big capture.
    const hook = fetch(`${url}/hook/host_a?cap=${RESTART_CAPTURE}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        session_id: "sess-restart",
        hook_event_name: "UserPromptSubmit",
        prompt: "hello after the restart",
      }),
    }).then(async (res) => {
      await res.body?.cancel();
      return { status: res.status, ms: performance.now() - t0 };
    });
    let restored_ms = health_ms;
    const during = { asks: 0, slowest_ms: 0 };
    let body = first.body;
    while (restoring(body)) {
      await new Promise((r) => setTimeout(r, 20));
      const h = await askHealth(url);
      if (!h) continue;
      during.asks++;
      during.slowest_ms = Math.max(during.slowest_ms, h.ms);
      body = h.body;
      restored_ms = performance.now() - t0;
    }
    const answered = await hook;
    return {
      health_ms,
      restored_ms,
      hook_ms: answered.ms,
      hook_status: answered.status,
      restoring_seen: restoring(first.body),
      health_during: during,
    };
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

if (import.meta.main) {
  const root = Deno.args[0] ??
    await Deno.makeTempDir({ prefix: "harness_restart_" });
  const count = Number(Deno.args[1] ?? 300_000);
  try {
    Deno.statSync(`${root}/captures/${RESTART_CAPTURE}.jsonl`);
  } catch {
    const t = performance.now();
    const f = fillOpenCapture(root, count);
    console.log(
      `filled ${f.events} events, ${(f.bytes / 1048576).toFixed(1)} MiB in ${
        ((performance.now() - t) / 1000).toFixed(1)
      } s`,
    );
  }
  for (let i = 0; i < 3; i++) console.log(await restartTimes(root));
}
