/**
 * The hook forwarder: one hook payload from a host's command hook to the
 * ingest server, failing open. It imports nothing heavy, so a hook costs
 * little more than Deno's start-up. Installed command hooks usually reach
 * the server through the hook client (`hook_client.sh`, curl, a few
 * milliseconds), which reads the same configuration and runs this
 * forwarder where it is needed (no curl; host_a's transcript events are
 * installed to run it directly).
 *
 * Configuration: `HARNESS_INGEST_URL` (default
 * `http://127.0.0.1:8848`), `HARNESS_CAPTURE_ID` (sent as `cap`, else the
 * server routes to its active capture), `HARNESS_HOOK_TIMEOUT` in
 * **milliseconds** (default {@linkcode DEFAULT_HOOK_TIMEOUT_MS}, decimal
 * digits only, at most {@linkcode MAX_HOOK_TIMEOUT_MS}), and
 * `HARNESS_INGEST_TOKEN` (sent as a bearer token when set).
 *
 * At host_a's Stop, StopFailure, SubagentStop, PreCompact and SessionEnd
 * the forwarder also reads
 * what the session transcript gained since its last read and sends it in
 * the payload (`lib/forwarder/transcript.ts`); that needs read permission
 * for the transcript and write permission for the offset directory
 * ({@linkcode DEFAULT_TRANSCRIPT_STATE_DIR}); without them the payload goes
 * as the host gave it.
 *
 * @module
 */

import { DEFAULT_TRANSCRIPT_STATE_DIR, withTranscript } from "./transcript.ts";

export { DEFAULT_TRANSCRIPT_STATE_DIR };

/** Default forwarder time-out in milliseconds. */
export const DEFAULT_HOOK_TIMEOUT_MS = 300;

/** Default ingest URL. */
export const DEFAULT_INGEST_URL = "http://127.0.0.1:8848";

/** Where and how to forward. */
export interface ForwardOptions {
  /** Ingest base URL. */
  url?: string;
  /** Capture id, sent as `cap`. */
  captureId?: string;
  /** Time-out in milliseconds. */
  timeoutMs?: number;
  /** Bearer token. */
  token?: string;
  /**
   * Directory of the transcript offset files (host_a).
   * @default DEFAULT_TRANSCRIPT_STATE_DIR
   */
  stateDir?: string;
  /**
   * host_a's model base URL (`ANTHROPIC_BASE_URL`, which Claude Code hands
   * its hooks). When it is the ingest server's own model gateway, the
   * forwarder does not read the transcript: the gateway records every model
   * call's tokens and the turns' texts, so the transcript would say them
   * twice.
   */
  modelBaseUrl?: string;
}

/** What happened (for tests and debugging; the host never sees it). */
export interface ForwardResult {
  /** Whether the server accepted it. */
  ok: boolean;
  /** HTTP status, when one came back. */
  status?: number;
  /** Why it failed: `timeout`, `unreachable`, the server's error. */
  error?: string;
}

/**
 * The stdout a host expects from a command hook that has nothing to say.
 *
 * @param host Host name.
 * @returns `{}` for host_b (its hooks want JSON), nothing otherwise.
 */
export function hostAnswer(host: string): string {
  return host === "host_b" ? "{}\n" : "";
}

/** The longest `HARNESS_HOOK_TIMEOUT` taken (ms); a larger value is clamped to it. */
export const MAX_HOOK_TIMEOUT_MS = 60_000;

/**
 * `HARNESS_HOOK_TIMEOUT` as the forwarder, the hook client and the
 * OpenCode plugin all read it: decimal digits only (leading zeros
 * dropped, never octal), clamped to {@linkcode MAX_HOOK_TIMEOUT_MS};
 * anything else (empty, 0, a sign, an exponent, a unit) is the default.
 *
 * @param value The variable's text.
 * @param fallback The default.
 * @returns Milliseconds.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(hookTimeoutMs("0900", 300), 900);
 * equal(hookTimeoutMs("1e3", 300), 300);
 * equal(hookTimeoutMs("12345678901234567890", 300), 60_000);
 * ```
 */
export function hookTimeoutMs(
  value: string | undefined,
  fallback: number,
): number {
  if (value === undefined || !/^[0-9]+$/.test(value)) return fallback;
  const digits = value.replace(/^0+/, "");
  if (digits === "") return fallback;
  return digits.length > 5
    ? MAX_HOOK_TIMEOUT_MS
    : Math.min(Number(digits), MAX_HOOK_TIMEOUT_MS);
}

/**
 * Read forwarder options from environment values.
 *
 * @param get Environment lookup.
 * @returns Options.
 */
export function optionsFromEnv(
  get: (name: string) => string | undefined,
): ForwardOptions {
  return {
    url: get("HARNESS_INGEST_URL") || DEFAULT_INGEST_URL,
    captureId: get("HARNESS_CAPTURE_ID") || undefined,
    timeoutMs: hookTimeoutMs(
      get("HARNESS_HOOK_TIMEOUT"),
      DEFAULT_HOOK_TIMEOUT_MS,
    ),
    token: get("HARNESS_INGEST_TOKEN") || undefined,
    modelBaseUrl: get("ANTHROPIC_BASE_URL") || undefined,
  };
}

/**
 * POST one payload to `/hook/<host>`. Never throws.
 *
 * @param host Host name.
 * @param body The payload text, as the host gave it.
 * @param options URL, capture, time-out, token.
 * @returns What happened.
 */
export async function forwardHook(
  host: string,
  body: string,
  options: ForwardOptions = {},
): Promise<ForwardResult> {
  const base = (options.url ?? DEFAULT_INGEST_URL).replace(/\/+$/, "");
  const target = `${base}/hook/${encodeURIComponent(host)}` +
    (options.captureId ? `?cap=${encodeURIComponent(options.captureId)}` : "");
  const timeoutMs = options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
  };
  try {
    if (!isGatewayOf(options.modelBaseUrl, base)) {
      body = await withTranscript(host, body, { stateDir: options.stateDir });
    }
    const { status, text } = target.startsWith("http://")
      ? await postPlain(target, body, headers, timeoutMs)
      : await postFetch(target, body, headers, timeoutMs);
    if (status === 204) return { ok: true, status };
    let parsed: { ok?: boolean; error?: string } = {};
    try {
      parsed = JSON.parse(text);
    } catch { /* not JSON */ }
    return parsed.ok === true
      ? { ok: true, status }
      : { ok: false, status, error: parsed.error ?? text };
  } catch (err) {
    return {
      ok: false,
      error: err instanceof TimeoutError
        ? "timeout"
        : `unreachable: ${(err as Error).message}`,
    };
  }
}

/**
 * Whether a model base URL is the model gateway of the ingest server at
 * `ingest` (same origin, the server's path or its `/v1`, or a named
 * package's `/p/NAME`).
 *
 * @param modelBaseUrl `ANTHROPIC_BASE_URL`, if set.
 * @param ingest The ingest server's base URL.
 * @returns True when model calls go through that server.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(isGatewayOf("http://127.0.0.1:8848", "http://127.0.0.1:8848"), true);
 * equal(isGatewayOf("http://127.0.0.1:8848/p/desk", "http://127.0.0.1:8848"), true);
 * equal(isGatewayOf("https://api.anthropic.com", "http://127.0.0.1:8848"), false);
 * ```
 */
export function isGatewayOf(
  modelBaseUrl: string | undefined,
  ingest: string,
): boolean {
  if (!modelBaseUrl) return false;
  try {
    const m = new URL(modelBaseUrl);
    const i = new URL(ingest);
    if (m.origin !== i.origin) return false;
    const root = i.pathname.replace(/\/+$/, "");
    const path = m.pathname.replace(/\/+$/, "");
    if (path === root || path === `${root}/v1`) return true;
    return path.startsWith(`${root}/p/`) &&
      /^[^/]+(\/v1)?$/.test(path.slice(root.length + 3));
  } catch {
    return false;
  }
}

/** Most bytes of a server answer the forwarder reads. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

class TimeoutError extends Error {
  override name = "TimeoutError";
}

/** A response's status and body text. */
interface PlainResponse {
  status: number;
  text: string;
}

/** POST with fetch (https, or anything not plain http). */
async function postFetch(
  target: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PlainResponse> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    const res = await fetch(target, {
      method: "POST",
      headers,
      body,
      signal: ctl.signal,
    });
    return { status: res.status, text: await res.text() };
  } catch (err) {
    if (ctl.signal.aborted) throw new TimeoutError("timeout");
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * POST over a plain TCP connection with `Connection: close`: a hook pays
 * for one process start, and fetch's client set-up is a sizeable part of
 * it, so plain http (the loopback case) skips it.
 */
async function postPlain(
  target: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PlainResponse> {
  const url = new URL(target);
  const enc = new TextEncoder();
  const payload = enc.encode(body);
  const head = `POST ${url.pathname}${url.search} HTTP/1.1\r\n` +
    `host: ${url.host}\r\nconnection: close\r\n` +
    Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("") +
    `content-length: ${payload.length}\r\n\r\n`;
  let conn: Deno.TcpConn | null = null;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      conn?.close();
    } catch { /* closed */ }
  }, timeoutMs);
  try {
    // Connect races the deadline: with a full accept queue a connect can
    // hang far longer than the host may wait.
    const connecting = Deno.connect({
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || 80),
    });
    let deadline: ((v: null) => void) | null = null;
    const expired = new Promise<null>((resolve) => deadline = resolve);
    const guard = setTimeout(() => deadline!(null), timeoutMs);
    const first = await Promise.race([connecting, expired]);
    clearTimeout(guard);
    if (first === null) {
      connecting.then((c) => c.close(), () => {});
      throw new TimeoutError("timeout");
    }
    conn = first;
    if (timedOut) throw new TimeoutError("timeout");
    const req = new Uint8Array(head.length * 3 + payload.length);
    const { written } = enc.encodeInto(head, req);
    req.set(payload, written);
    const all = req.subarray(0, written + payload.length);
    let done = 0;
    while (done < all.length) done += await conn.write(all.subarray(done));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(16 * 1024);
    let got = 0;
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      got += n;
      if (got > MAX_RESPONSE_BYTES) break; // an answer is a few bytes
    }
    const text = new TextDecoder().decode(concat(chunks));
    const status = Number(text.slice(9, 12));
    if (!text.startsWith("HTTP/1.") || !Number.isInteger(status)) {
      throw new Error("not an HTTP response");
    }
    const sep = text.indexOf("\r\n\r\n");
    return { status, text: sep >= 0 ? text.slice(sep + 4) : "" };
  } catch (err) {
    if (timedOut) throw new TimeoutError("timeout");
    throw err;
  } finally {
    clearTimeout(timer);
    try {
      conn?.close();
    } catch { /* closed */ }
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const c of chunks) size += c.length;
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}

/**
 * Read all of a stream (the hook payload on stdin; host_b's stdin is a
 * socket, so read to EOF rather than opening `/dev/stdin`).
 *
 * @param stream The readable.
 * @param limit Stop reading past this many bytes.
 * @returns The text.
 */
export async function readAll(
  stream: ReadableStream<Uint8Array>,
  limit = 64 * 1024 * 1024,
  deadlineMs?: number,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  const timer = deadlineMs === undefined
    ? null
    : setTimeout(() => reader.cancel().catch(() => {}), deadlineMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
      if (size > limit) break;
    }
  } catch {
    // Cancelled at the deadline: forward what arrived.
  } finally {
    if (timer !== null) clearTimeout(timer);
    reader.releaseLock();
  }
  return new TextDecoder().decode(concat(chunks));
}
