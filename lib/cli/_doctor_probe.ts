/**
 * What the doctor asks the ingest server: whether one answers at a hook's
 * URL, and whether it would record what a hook sends (route, capture and
 * token as the hook sends them).
 *
 * @module
 */
import { isCaptureFinished } from "../installers/gateway_health.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

/**
 * Whether an ingest server answers at a hook's URL (its `/health`, given up
 * after 1 s).
 *
 * @param url The URL the hook posts to.
 * @returns Null when one answers, else why not (credentials masked).
 */
export async function serverProblem(url: string): Promise<string | null> {
  try {
    const base = new URL(url);
    const ctl = new AbortController();
    const t = setTimeout(() => ctl.abort(), 1000);
    try {
      const res = await fetch(`${base.origin}/health`, { signal: ctl.signal });
      await res.body?.cancel();
      return null;
    } finally {
      clearTimeout(t);
    }
  } catch {
    return `no ingest server answers at ${
      maskUrlCredentials(url)
    } ("ingest.ts serve")`;
  }
}

/** How an installed hook reaches the server. */
export interface HookRoute {
  /** The host the hook is for. */
  host: string;
  /** Ingest URL the hook posts to (any `?cap=` kept). */
  url: string;
  /** The capture it is pinned to, if any. */
  capture?: string;
  /** The bearer token it sends, if any. */
  token?: string;
}

/**
 * Send a probe the way a hook does (same route, capture and token; a body
 * the server refuses before recording anything) and read the capture it
 * would write to: what the server answers is what every event will get.
 *
 * @param r The route.
 * @returns Null when events would be recorded, else why not.
 */
export async function probeHook(r: HookRoute): Promise<string | null> {
  const base = new URL(r.url);
  const cap = r.capture ?? base.searchParams.get("cap") ?? undefined;
  let answer: { status: number; text: string };
  try {
    answer = await serverRequest(
      base.origin,
      `/hook/${r.host}${cap ? `?cap=${encodeURIComponent(cap)}` : ""}`,
      {
        token: r.token,
        init: {
          method: "POST",
          body: JSON.stringify({ harness_doctor_probe: true }),
        },
      },
    );
  } catch {
    return `no ingest server answers at ${
      maskUrlCredentials(r.url)
    } ("ingest.ts serve")`;
  }
  if (answer.status === 401) {
    return `the server at ${base.origin} requires a bearer token the hooks do not send: every event gets 401 and is dropped — ${
      r.token
        ? "the token in HARNESS_INGEST_TOKEN is not the server's"
        : "set HARNESS_INGEST_TOKEN where the host runs, then reinstall the hooks (claude-code then uses the forwarder, which sends it)"
    }`;
  }
  if (answer.status !== 200) {
    return `the server at ${base.origin} answers a hook with ${answer.status}: ${
      answer.text.slice(0, 200)
    }`;
  }
  if (
    cap &&
    await isCaptureFinished(
      { origin: base.origin, capture: cap },
      (origin, path) => serverRequest(origin, path, { token: r.token }),
    )
  ) {
    return `the hooks are pinned to capture "${cap}", which is finished: the server answers every event 200 ok:false and records nothing — reinstall with --capture of an open capture, or without --capture`;
  }
  return null;
}

/**
 * A request to the server, given up after 2 s; its status and text.
 *
 * @param origin The server's origin.
 * @param path The path (and query) asked for.
 * @param o `token`: the bearer token to send; `init`: method and body.
 * @returns The answer's status and text.
 * @throws {Error} When the server does not answer in time.
 */
export async function serverRequest(
  origin: string,
  path: string,
  o: { token?: string; init?: RequestInit } = {},
): Promise<{ status: number; text: string }> {
  const ctl = new AbortController();
  const t = setTimeout(() => ctl.abort(), 2000);
  try {
    const res = await fetch(new URL(path, origin), {
      ...o.init,
      headers: {
        "content-type": "application/json",
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      },
      signal: ctl.signal,
    });
    return { status: res.status, text: await res.text() };
  } finally {
    clearTimeout(t);
  }
}
