/**
 * `ingest.ts status` and `stop`: what the running ingest server of a store
 * says about itself, and stopping it.
 *
 * @module
 */
import type { Io } from "./io.ts";
import { probeHealth, readPidFile, removePidFile } from "./daemon_files.ts";
import { isStoreLocked } from "../store/lock.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

/**
 * `status`: is a server running for this root?
 *
 * @param o `root`: the store root; `json`: JSON output.
 * @param io Output.
 * @returns 0 when running, 1 when not.
 */
export async function status(
  o: { root: string; json: boolean },
  io: Io,
): Promise<number> {
  const { root, json } = o;
  const rec = readPidFile(root);
  const health = rec ? await probeHealth(rec.url) : null;
  const state = health
    ? "running"
    : rec
    ? "not answering (stale pid file)"
    : "not running";
  if (json) {
    io.out(JSON.stringify(
      {
        running: health !== null,
        url: rec?.url ?? null,
        pid: rec?.pid ?? null,
        root,
        stats: health?.stats ?? null,
        replication: health?.replication ?? null,
        otlp_export: health?.otlp_export ?? null,
      },
      null,
      2,
    ));
  } else {
    io.out(
      rec
        ? `ingest server ${state}: ${rec.url} (pid ${rec.pid}, store ${root})`
        : `ingest server not running for store ${root}`,
    );
    const rep = health?.replication as
      | {
        lag_events: number;
        last_error: string | null;
        shipped: number;
        stalled?: boolean;
        database?: string;
      }
      | undefined;
    if (rep) {
      io.out(
        `replication${rep.database ? ` to ${rep.database}` : ""}: ${
          rep.stalled ? "STALLED, " : ""
        }${rep.lag_events} events behind, ${rep.shipped} shipped${
          rep.last_error
            ? `; last error: ${maskUrlCredentials(rep.last_error)}`
            : ""
        }`,
      );
    }
    const otlp = health?.otlp_export as
      | {
        endpoint: string;
        lag_events: number;
        sent_spans: number;
        stalled?: boolean;
        last_error: string | null;
      }
      | undefined;
    if (otlp) {
      io.out(
        `OTLP export to ${maskUrlCredentials(otlp.endpoint)}: ${
          otlp.stalled ? "STALLED, " : ""
        }${otlp.lag_events} events behind, ${otlp.sent_spans} spans sent${
          otlp.last_error
            ? `; last error: ${maskUrlCredentials(otlp.last_error)}`
            : ""
        }`,
      );
    }
  }
  return health ? 0 : 1;
}

/**
 * `stop`: ask the running server to stop and wait for it.
 *
 * @param o `root`: the store root; `json`: one JSON object out
 *   (`{stopped, was_running, url, pid, killed}`).
 * @param io Output.
 * @returns 0 when stopped (or not running), 1 when it would not stop.
 */
export async function stop(
  o: { root: string; json: boolean },
  io: Io,
): Promise<number> {
  const { root } = o;
  const say = (
    text: string,
    r: { was_running: boolean; url?: string; pid?: number; killed?: boolean },
  ) =>
    io.out(
      o.json
        ? JSON.stringify({
          stopped: true,
          was_running: r.was_running,
          url: r.url ?? null,
          pid: r.pid ?? null,
          killed: r.killed ?? false,
        })
        : text,
    );
  const rec = readPidFile(root);
  if (!rec) {
    say(`No ingest server is running for store ${root}`, {
      was_running: false,
    });
    return 0;
  }
  try {
    const res = await fetch(`${rec.url}/admin/shutdown`, {
      method: "POST",
      headers: { "x-harness-admin-key": rec.admin_key },
    });
    await res.body?.cancel();
  } catch {
    say(
      `The ingest server at ${rec.url} does not answer; its pid file is stale`,
      { was_running: false, url: rec.url, pid: rec.pid },
    );
    return 0;
  }
  // Stopped means the process let go of the store, not only that the
  // listener closed.
  const gone = () => !isStoreLocked(root) && readPidFile(root)?.pid !== rec.pid;
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (gone()) {
      say(`Stopped the ingest server at ${rec.url} (pid ${rec.pid})`, {
        was_running: true,
        url: rec.url,
        pid: rec.pid,
      });
      return 0;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // Still holding the store: end the process if this one may.
  try {
    Deno.kill(rec.pid, "SIGKILL");
    const until = Date.now() + 2_000;
    while (Date.now() < until && isStoreLocked(root)) {
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!isStoreLocked(root)) {
      removePidFile(root, rec.pid);
      say(
        `Stopped the ingest server at ${rec.url} (pid ${rec.pid}; it did not end in 5 s and was killed — acknowledged events are in the spools)`,
        { was_running: true, url: rec.url, pid: rec.pid, killed: true },
      );
      return 0;
    }
  } catch { /* not permitted, or gone */ }
  io.err(
    `harness: the ingest server at ${rec.url} (pid ${rec.pid}) still holds the store after 5 s: kill ${rec.pid}`,
  );
  return 1;
}
