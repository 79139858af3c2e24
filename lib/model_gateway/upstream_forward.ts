/**
 * {@linkcode forwardUpstream}: the one way a model request goes to its
 * upstream, for the plain path (which relays the answer as it comes) and
 * for package serving (which reads it whole to check it, and may ask
 * again): the upstream deadline started, the request sent as given, and a
 * failure — unreachable, too slow, the client gone — turned into the
 * gateway's error, 502 or 504 (`upstream_answer.ts`), for the caller to
 * record and throw. A loopback `http:` upstream is asked through the
 * gateway's own HTTP/1.1 client (`http1_client/`), any other through `fetch`.
 *
 * @module
 */
import type { GatewayError } from "./gateway_error.ts";
import { Http1Client } from "./http1_client/client.ts";
import type { ModelGatewayStats } from "./options.ts";
import { upstreamFailure } from "./upstream_answer.ts";
import { UpstreamDeadline } from "./upstream_deadline.ts";
import type { WireSpec } from "./wires/wire_spec.ts";
import { fromFetch, type UpstreamResponse } from "./upstream_response.ts";

/** A request on its way to the upstream. */
export interface UpstreamCall {
  /** The upstream URL. */
  url: string;
  /** Method. */
  method: string;
  /** Headers passed on. */
  headers: Headers;
  /** Body bytes or text, or null. */
  body: Uint8Array | string | null;
  /** The client's signal (aborted when it goes away). */
  client: AbortSignal | undefined;
}

/** What forwarding needs of the gateway. */
export interface ForwardDeps {
  /** The wire (its error shape). */
  family: WireSpec;
  /** Milliseconds the upstream may take to answer in full. */
  timeoutMs: number;
  /** The gateway's counters. */
  stats: ModelGatewayStats;
  /** The gateway's own client, for the upstreams it takes; null: `fetch` for all. */
  client: Http1Client | null;
}

/** An upstream that answered: its response, its running deadline, and how a later failure reads. */
export interface Forwarded {
  /** The upstream's response (its body not read yet). */
  res: UpstreamResponse;
  /** The deadline, running until the caller ends it (the answer read or relayed). */
  deadline: UpstreamDeadline;
  /**
   * The error for a failure while the body is read (the deadline ended).
   *
   * @param err What the read threw.
   * @returns The 502 or 504.
   */
  fail(err: unknown): GatewayError;
}

/**
 * Send a request to its upstream.
 *
 * @param call The request.
 * @param deps The wire, the time-out, the counters.
 * @returns The upstream's response with its deadline, or the gateway's
 *   error, 502 or 504 (the deadline ended), when there is none.
 */
export async function forwardUpstream(
  call: UpstreamCall,
  deps: ForwardDeps,
): Promise<Forwarded | { error: GatewayError }> {
  const deadline = new UpstreamDeadline(deps.timeoutMs, call.client);
  // Aborted by the client or the time-out; `upstreamFailure` asks the
  // client first, so the rest is the time-out.
  const signal = deadline.signal;
  const fail = (err: unknown) => {
    deadline.end();
    return upstreamFailure({
      family: deps.family,
      url: call.url,
      err,
      client: call.client,
      timeout: signal,
      timeoutMs: deps.timeoutMs,
    }, deps.stats);
  };
  try {
    const body = call.body;
    // Parsed only when it may be the own client's (remote upstreams are https).
    const url = deps.client && call.url.startsWith("http://")
      ? new URL(call.url)
      : null;
    if (url && Http1Client.takes(url)) {
      const res = await deps.client!.send({
        url,
        method: call.method,
        headers: call.headers,
        body,
        signal,
      });
      return { res, deadline, fail };
    }
    const res = await fetch(call.url, {
      method: call.method,
      headers: call.headers,
      body: body === null || body.length === 0
        ? null
        : body as Uint8Array<ArrayBuffer> | string,
      signal,
      redirect: "manual",
    });
    return { res: fromFetch(res), deadline, fail };
  } catch (err) {
    return { error: fail(err) };
  }
}

/**
 * Let go of a request sent upstream whose answer no one will read (what
 * came after sending it threw): its deadline ends and its answer's body,
 * once there is one, is cancelled, so its connection and timer go.
 *
 * @param sent The forward under way.
 * @param reason Why.
 */
export function abandonForward(
  sent: Promise<Forwarded | { error: GatewayError }>,
  reason: unknown,
): void {
  sent.then((s) => {
    if ("error" in s) return;
    s.deadline.end();
    return s.res.body?.cancel(reason);
  }).catch(() => {});
}
