/**
 * `ingest.ts serve` (in the foreground or detached); `status` and `stop`
 * are `cmd_status.ts`.
 *
 * @module
 */
import { HarnessStore } from "../store/store.ts";
import { IngestServer } from "../ingest/server.ts";
import { SERVER_V8_FLAGS } from "../ingest/server_heap.ts";
import {
  DEFAULT_REDACTION_RULES,
  parseRedactionRules,
} from "../trace/redact.ts";
import { type Io, UsageError } from "./io.ts";
import { UPSTREAMS, WIRE_SPECS } from "../model_gateway/wires/registry.ts";
import type { ModelGatewayOptions } from "../model_gateway/options.ts";
import { OtlpStreamer } from "../otel/stream.ts";
import type { OtlpProtocol } from "../otel/send.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";
import type { Replicator } from "../team/replicator.ts";
import {
  logPath,
  probeHealth,
  readPidFile,
  removePidFile,
  writePidFile,
} from "./daemon_files.ts";

/** Options of `serve`. */
export interface ServeOptions {
  /** Store root. */
  root: string;
  /** Bind address. */
  host: string;
  /** Port. */
  port: number;
  /** Allow non-loopback (needs token). */
  allowRemote: boolean;
  /** Bearer token (`HARNESS_INGEST_TOKEN`). */
  token?: string;
  /** Body limit in bytes. */
  maxBodyBytes?: number;
  /** Connections open at once. @default 256 */
  maxConnections?: number;
  /** Idle connections are closed after this. @default 15000 */
  idleTimeoutMs?: number;
  /** Extra redaction rules file. */
  redactRules?: string;
  /** Turn redaction off. */
  noRedact: boolean;
  /** Resolves when the server should stop (signals). */
  stopSignal?: Promise<void>;
  /** Ship every acknowledged event to this team database, in the background. */
  replicate?: import("../team/db_target.ts").DbTarget | string;
  /** Milliseconds of no replication progress (events waiting) before `/health` says `ok: false`. @default 30000 */
  replicateStallMs?: number;
  /** Milliseconds a replication statement may take. @default 8000 */
  replicateStatementTimeoutMs?: number;
  /** Stream stored events as spans to this OTLP collector (`…/v1/traces`). */
  exportOtlp?: string;
  /** Encoding for `exportOtlp`. @default "http/json" */
  exportOtlpProtocol?: OtlpProtocol;
  /** Headers for `exportOtlp` (API keys). */
  exportOtlpHeaders?: Record<string, string>;
  /** Spans per export request, and the most waiting in memory (the stream never drops: the spool is its queue). @default 100 */
  exportOtlpQueue?: number;
  /** Milliseconds between export rounds when caught up. @default 1000 */
  exportOtlpIntervalMs?: number;
  /** Milliseconds of no export progress (events waiting) before `/health` says `ok: false`. @default 30000 */
  exportOtlpStallMs?: number;
  /** The model API routes' upstreams; false turns them off. @default {} (the public APIs) */
  modelGateway?:
    | import("../model_gateway/options.ts").ModelGatewayOptions
    | false;
}

/**
 * Parse an export URL: an http(s) URL.
 *
 * @param url The collector URL.
 * @returns The parsed URL.
 * @throws {UsageError} Saying what to fix.
 */
export function parseExportUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `--export-otlp takes a URL such as http://127.0.0.1:4318/v1/traces, not "${
        maskUrlCredentials(url)
      }"`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(
      `--export-otlp takes an http(s) URL (OTLP/HTTP), not "${
        maskUrlCredentials(url)
      }"`,
    );
  }
  return parsed;
}

/**
 * Check that an export URL is usable and that this process may reach it.
 *
 * @param url The collector URL.
 * @returns The parsed URL.
 * @throws {UsageError} Saying what to fix.
 */
export function checkExportUrl(url: string): URL {
  const parsed = parseExportUrl(url);
  const state = Deno.permissions.querySync({ name: "net", host: parsed.host })
    .state;
  if (state !== "granted") {
    throw new UsageError(
      `This process may not connect to ${parsed.host}: run it with --allow-net=127.0.0.1,${parsed.host} (the serve task allows loopback only)`,
    );
  }
  return parsed;
}

/**
 * Run the server in the foreground until stopped.
 *
 * @param o Options.
 * @param io Output.
 * @returns Exit code.
 */
export async function serve(o: ServeOptions, io: Io): Promise<number> {
  // The store root is owner-only, like everything in it.
  Deno.mkdirSync(o.root, { recursive: true, mode: 0o700 });
  const extra = o.redactRules
    ? parseRedactionRules(Deno.readTextFileSync(o.redactRules))
    : [];
  // One redaction on every path into the store (the sinks apply it).
  const store = new HarnessStore(o.root, {
    role: "ingest-server",
    redaction: o.noRedact ? false : [...DEFAULT_REDACTION_RULES, ...extra],
  });
  try {
    for (const f of store.findings) io.err(`harness: ${f.message}`);
    const adminKey = crypto.randomUUID();
    // What this run recorded, by every route (the model gateway and
    // streamed imports write beside the server's own count).
    const eventsIn = () =>
      store.listCaptures().reduce((n, c) => n + c.event_count, 0);
    const before = eventsIn();
    const replicator = await openReplicator(store, o);
    const streamer = openStreamer(store, o);
    const unobserve = streamer
      ? store.observe(() => streamer.notify())
      : () => {};
    let stop!: () => void;
    const stopped = new Promise<void>((r) => stop = r);
    const server = new IngestServer(store, {
      host: o.host,
      port: o.port,
      allowRemote: o.allowRemote,
      token: o.token ?? null,
      maxBodyBytes: o.maxBodyBytes,
      maxConnections: o.maxConnections,
      idleTimeoutMs: o.idleTimeoutMs,
      redaction: o.noRedact ? false : [...DEFAULT_REDACTION_RULES, ...extra],
      adminKey,
      onShutdown: () => stop(),
      modelGateway: o.modelGateway,
      ...(replicator || streamer
        ? { healthExtra: () => healthExtra(replicator, streamer) }
        : {}),
    });
    const url = await server.start();
    replicator?.start();
    streamer?.start();
    store.lock?.update({ role: "ingest-server", url });
    writePidFile(o.root, {
      pid: Deno.pid,
      url,
      admin_key: adminKey,
      root: o.root,
      started_at: new Date().toISOString(),
    });
    io.out(
      `harness ingest server on ${url} (store ${o.root}, pid ${Deno.pid})`,
    );
    if (server.modelGateway && o.modelGateway !== false) {
      for (const line of gatewayLines(url, o.modelGateway ?? {})) io.out(line);
    }
    await Promise.race([stopped, o.stopSignal ?? new Promise(() => {})]);
    await server.close();
    // Bounded whatever the database does (acknowledged events are in the
    // spools already; the cursor resumes where the last commit left it).
    await replicator?.stop();
    unobserve();
    await streamer?.close();
    if (streamer) io.out(exportSummary(streamer));
    removePidFile(o.root, Deno.pid);
    const recorded = Math.max(0, eventsIn() - before);
    io.out(
      `harness ingest server stopped (${recorded} event${
        recorded === 1 ? "" : "s"
      } recorded)`,
    );
    return 0;
  } finally {
    store.close();
  }
}

/**
 * The replicator `--replicate` asks for (loaded only then).
 *
 * @param store The store.
 * @param o Options.
 * @returns The replicator, or null.
 */
async function openReplicator(
  store: HarnessStore,
  o: ServeOptions,
): Promise<Replicator | null> {
  if (!o.replicate) return null;
  const { Replicator } = await import("../team/replicator.ts");
  return new Replicator(store, o.replicate, {
    stallAfterMs: o.replicateStallMs,
    statementTimeoutMs: o.replicateStatementTimeoutMs,
  });
}

/**
 * The OTLP streamer `--export-otlp` asks for.
 *
 * @param store The store.
 * @param o Options.
 * @returns The streamer, or null.
 */
function openStreamer(
  store: HarnessStore,
  o: ServeOptions,
): OtlpStreamer | null {
  if (!o.exportOtlp) return null;
  checkExportUrl(o.exportOtlp);
  return new OtlpStreamer(store, o.exportOtlp, {
    protocol: o.exportOtlpProtocol,
    headers: o.exportOtlpHeaders,
    batchSpans: o.exportOtlpQueue,
    intervalMs: o.exportOtlpIntervalMs,
    stallAfterMs: o.exportOtlpStallMs,
  });
}

/**
 * The health fields of the replicator and the streamer.
 *
 * @param replicator The replicator, or null.
 * @param streamer The streamer, or null.
 * @returns Fields to merge into `GET /health`.
 */
function healthExtra(
  replicator: Replicator | null,
  streamer: OtlpStreamer | null,
): Record<string, unknown> {
  return {
    // Stalled replication is a failing server: events pile up unshipped.
    ...(replicator?.status.stalled || streamer?.status.stalled
      ? { ok: false }
      : {}),
    ...(replicator ? { replication: replicator.status } : {}),
    ...(streamer ? { otlp_export: streamer.status } : {}),
  };
}

/**
 * The line `serve` prints about the OTLP export when it stops.
 *
 * @param streamer The streamer.
 * @returns Text.
 */
function exportSummary(streamer: OtlpStreamer): string {
  const st = streamer.status;
  return `OTLP export to ${st.endpoint}: ${st.sent_spans} spans sent, ${st.lag_events} events not yet sent (the next start sends them)${
    st.last_error ? `; last error: ${st.last_error}` : ""
  }`;
}

/**
 * Start the server as a detached background process and wait until it answers.
 *
 * @param o `args`: the `serve` arguments to pass on (without `--detach`);
 *   `root`: the store root; `module`: the URL of ingest.ts;
 *   `permissions`: the permission flags for the child.
 * @param io Output.
 * @returns Exit code.
 */
export async function serveDetached(
  o: { args: string[]; root: string; module: string; permissions: string[] },
  io: Io,
): Promise<number> {
  const { args, root, module, permissions } = o;
  const running = readPidFile(root);
  if (running && await probeHealth(running.url)) {
    io.err(
      `harness: an ingest server already runs on ${running.url} for ${root} (pid ${running.pid}); "ingest.ts stop" stops it`,
    );
    return 1;
  }
  Deno.mkdirSync(root, { recursive: true, mode: 0o700 });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      SERVER_V8_FLAGS,
      ...permissions,
      module,
      "serve",
      ...args,
      "--log",
      logPath(root),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  child.unref();
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const rec = readPidFile(root);
    if (rec?.pid === child.pid && await probeHealth(rec.url)) {
      io.out(
        `harness ingest server on ${rec.url} (pid ${rec.pid}, log ${
          logPath(root)
        })`,
      );
      return 0;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  io.err(`harness: the server did not come up; see ${logPath(root)}`);
  return 1;
}

/**
 * What the start-up says of the model gateway: each SDK's base URL at this
 * server and the upstream's full base URL it forwards to (path included: an
 * OpenAI-compatible upstream without `/v1` gets `/chat/completions`, which
 * most servers answer 404, so a path-less one gets a note), and each served package's
 * base URLs for both SDKs (Anthropic's without `/v1`: its SDK adds it).
 *
 * @param url This server's URL.
 * @param gw The gateway's options.
 * @returns The lines.
 *
 * @example
 * ```ts
 * import { gatewayLines } from "./cmd_serve.ts";
 * import { equal } from "node:assert/strict";
 * const lines = gatewayLines("http://127.0.0.1:8848", {
 *   upstreamOpenai: "http://127.0.0.1:8000/v1",
 * });
 * equal(lines[1], "  OPENAI_BASE_URL=http://127.0.0.1:8848/v1 → http://127.0.0.1:8000/v1");
 * ```
 */
export function gatewayLines(
  url: string,
  gw: ModelGatewayOptions,
): string[] {
  const given: Record<string, string | undefined> = {
    ...(gw.upstreamOpenai ? { openai: gw.upstreamOpenai } : {}),
    ...(gw.upstreamAnthropic ? { anthropic: gw.upstreamAnthropic } : {}),
    ...gw.upstreams,
  };
  const lines = ["model gateway (point the SDKs here):"];
  for (const u of UPSTREAMS) {
    const to = given[u.name] ?? u.default;
    lines.push(`  ${u.sdk_env}=${url}${u.sdk_path} → ${to}`);
    if (u.strip !== "" && new URL(to).pathname === "/") {
      // The path a request would get there (the catch-all wire's, last).
      const wire = WIRE_SPECS.findLast((s) => s.upstream === u)!;
      const first = String(wire.paths.find((p) => p.recorded)!.path);
      lines.push(
        `  note: the ${u.title} upstream has no path, so requests go to ${to}${
          first.slice(u.strip.length)
        }; most ${u.title}-compatible servers answer at ${to}${u.strip} (set that if this one answers 404)`,
      );
    }
  }
  for (const name of Object.keys(gw.packages ?? {})) {
    const id = gw.packages![name].id;
    const base = name === "" ? url : `${url}/p/${name}`;
    lines.push(
      `  serving package ${id}: ${
        UPSTREAMS.map((u) => `${u.sdk_env}=${base}${u.sdk_path}`).join(", ")
      }`,
    );
  }
  return lines;
}
