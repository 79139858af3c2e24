/**
 * A scripted loopback upstream for the gateway's own HTTP/1.1 client
 * (`tests/model_gateway/http1_client*_test.ts`): each request is answered
 * with the bytes a test gives, and what the upstream saw is kept; with a
 * request to send and readers of the answer.
 *
 * @module
 */
import { closeQuietly, ConnReader, writeAll } from "./_raw_http.ts";
import type { UpstreamResponse } from "../../lib/model_gateway/upstream_response.ts";

export const enc = new TextEncoder();
export const dec = new TextDecoder();

/** What the scripted upstream saw of one request. */
export interface Seen {
  head: string;
  body: string;
  conn: number;
}

/**
 * A loopback upstream: each request is answered with `answer`'s bytes
 * (then the connection is closed when it says so).
 */
export function scripted(
  answer: (req: Seen) => { bytes: Uint8Array | string; close?: boolean },
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: Seen[] = [];
  const conns = new Set<Deno.Conn>();
  let accepted = 0;
  let closedByPeer = 0;
  const serving: Promise<void>[] = [];
  const serve = async (conn: Deno.Conn, n: number) => {
    const r = new ConnReader(conn);
    try {
      for (;;) {
        const head = await r.head();
        if (head === null) {
          closedByPeer++;
          return;
        }
        const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        const body = dec.decode(await r.exact(len));
        const req = { head, body, conn: n };
        seen.push(req);
        const a = answer(req);
        await writeAll(
          conn,
          typeof a.bytes === "string" ? enc.encode(a.bytes) : a.bytes,
        );
        if (a.close) return;
      }
    } catch {
      // The client went away.
    } finally {
      await r.settle();
      conns.delete(conn);
      closeQuietly(conn);
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      serving.push(serve(conn, accepted++));
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    seen,
    get accepted() {
      return accepted;
    },
    get closedByPeer() {
      return closedByPeer;
    },
    /** Close every connection the upstream holds (as an idle time-out does). */
    dropAll() {
      for (const c of conns) closeQuietly(c);
    },
    async close() {
      listener.close();
      for (const c of conns) closeQuietly(c);
      await accepting;
      await Promise.all(serving);
    },
  };
}

export function call(
  url: string,
  body = '{"q":1}',
  signal = new AbortController().signal,
) {
  return {
    url: new URL(`${url}/v1/chat/completions`),
    method: "POST",
    headers: new Headers({ "content-type": "application/json", "x-a": "b" }),
    body,
    signal,
  };
}

export async function text(res: UpstreamResponse): Promise<string> {
  return dec.decode(await res.bytes());
}

export async function pieces(res: UpstreamResponse): Promise<string[]> {
  const out: string[] = [];
  for (let p = await res.body!.next(); p; p = await res.body!.next()) {
    out.push(dec.decode(p));
  }
  return out;
}

export const ok = (body: string, more = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${more}content-length: ${body.length}\r\n\r\n${body}`;
