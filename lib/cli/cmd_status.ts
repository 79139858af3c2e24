/**
 * `ingest.ts status` and `stop`: what the running ingest server of a store
 * says about itself (where it listens, the active capture, the model
 * gateway's counters and the packages it serves; how to start one when none
 * runs), and stopping it.
 *
 * @module
 */
import type { Io } from "./io.ts";
import { readPidFile, removePidFile } from "./daemon_files.ts";
import { grantedEnv } from "./env.ts";
import { DEFAULT_ROOT } from "./root.ts";
import { readActiveCapture } from "../store/active_capture.ts";
import { isStoreLocked } from "../store/lock.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

/** The model gateway's part of `/health` (`lib/model_gateway/options.ts`). */
interface GatewayHealth {
  requests: number;
  streams: number;
  recorded: number;
  record_misses: number;
  last_miss: string | null;
  upstream_errors: number;
  client_aborts: number;
  queued: number;
  last_request_at: string | null;
  upstreams: Record<string, string>;
  packages?: Record<string, string>;
  served?: number;
  passed_through?: number;
  last_pass_through?: string | null;
  refusals?: number;
  gave_up?: number;
}

/**
 * How to start a server for this store: the task a user of the checkout
 * runs, with the store named when it is not the default one.
 *
 * @param root The store root.
 * @returns The advice.
 */
export function startAdvice(root: string): string {
  const env = root === DEFAULT_ROOT ? "" : `HARNESS_ROOT=${root} `;
  return `start it with "${env}deno task serve" (stays in the foreground; "${env}deno task daemon" runs it in the background)`;
}

/**
 * The server's `/health`, sent with the token when there is one.
 *
 * @param url The server's URL.
 * @param token `HARNESS_INGEST_TOKEN`, if set.
 * @returns The health, `{auth: "token required"}` when it wants a token
 *   this process has not (or a wrong one), or null when it does not answer.
 */
async function readHealth(
  url: string,
  token: string | undefined,
): Promise<Record<string, unknown> | null> {
  try {
    const res = await fetch(`${url}/health`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(2_000),
    });
    if (res.status === 401) {
      await res.body?.cancel();
      return { ok: true, auth: "token required" };
    }
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    return await res.json();
  } catch {
    return null;
  }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The model gateway's lines: its counters, its upstreams and the packages
 * it serves with what they did.
 *
 * @param g The gateway's health.
 * @param url The server's URL (for the packages' base URLs).
 * @returns Lines.
 */
function gatewayLines(g: GatewayHealth, url: string): string[] {
  const lines = [
    `model gateway: ${
      plural(g.requests, "request")
    } (${g.streams} streamed), ${g.recorded} recorded, ${g.record_misses} not recorded${
      g.last_miss ? ` (last: ${g.last_miss})` : ""
    }, ${g.queued} waiting to be recorded, ${
      plural(g.upstream_errors, "upstream error")
    }, ${plural(g.client_aborts, "client abort")}; last request ${
      g.last_request_at ?? "never"
    }`,
    `  upstreams: ${
      Object.entries(g.upstreams).map(([n, o]) => `${n} ${o}`).join(", ")
    }`,
  ];
  const packages = Object.entries(g.packages ?? {});
  for (const [route, id] of packages) {
    lines.push(`  serving package ${id} at ${url}${route}`);
  }
  if (packages.length) {
    lines.push(
      `  packages: ${plural(g.served ?? 0, "answer")} served, ${
        plural(g.refusals ?? 0, "call")
      } refused, ${plural(g.passed_through ?? 0, "request")} passed through, ${
        g.gave_up ?? 0
      } gave up${
        g.last_pass_through ? `; last pass-through: ${g.last_pass_through}` : ""
      }`,
    );
  }
  return lines;
}

/**
 * `status`: is a server running for this root? When it is: where, the
 * active capture, and the model gateway's counters and served packages
 * (from `/health`); when it is not: how to start it.
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
  const health = rec
    ? await readHealth(rec.url, grantedEnv("HARNESS_INGEST_TOKEN"))
    : null;
  const state = health
    ? "running"
    : rec
    ? "not answering (stale pid file)"
    : "not running";
  const active = readActiveCapture(root);
  const gateway = (health?.model_gateway ?? null) as GatewayHealth | null;
  const advice = health ? null : startAdvice(root);
  if (json) {
    io.out(JSON.stringify(
      {
        running: health !== null,
        url: rec?.url ?? null,
        pid: rec?.pid ?? null,
        root,
        active_capture: active,
        stats: health?.stats ?? null,
        model_gateway: gateway,
        replication: health?.replication ?? null,
        otlp_export: health?.otlp_export ?? null,
        ...(health?.auth ? { auth: health.auth } : {}),
        ...(advice ? { start: advice } : {}),
      },
      null,
      2,
    ));
    return health ? 0 : 1;
  }
  io.out(
    rec
      ? `ingest server ${state}: ${rec.url} (pid ${rec.pid}, store ${root})`
      : `ingest server not running for store ${root}`,
  );
  if (advice) {
    io.out(`  ${advice}`);
    return 1;
  }
  if (health?.auth) {
    io.out(
      `  the server wants its token: set HARNESS_INGEST_TOKEN to see its counters`,
    );
  }
  io.out(
    active
      ? `active capture: ${active} (requests and hook events that name no capture go to it)`
      : `no active capture: requests and hook events that name no capture go to "default" ("capture start" makes one active)`,
  );
  if (gateway) io.out(gatewayLines(gateway, rec!.url).join("\n"));
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
  return 0;
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
