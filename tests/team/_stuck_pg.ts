/**
 * Test helper: a loopback TCP server that completes PostgreSQL's start-up
 * (authentication ok, parameters, backend key, ready for query) and then
 * never answers a query — the database that "stops answering". It reads
 * and drops everything a client sends; a cancel request gets nothing
 * either.
 *
 * @module
 */

/** A running stuck server. */
export interface StuckPg {
  /** `postgres://harness@127.0.0.1:<port>/team`. */
  url: string;
  /** Its port. */
  port: number;
  /** Connections it has taken. */
  readonly connections: number;
  /** Stop listening and drop every connection. */
  close(): void;
  /** Same as {@linkcode StuckPg.close}. */
  [Symbol.dispose](): void;
}

function message(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + body.length);
  out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}

function int32s(...values: number[]): Uint8Array {
  const out = new Uint8Array(4 * values.length);
  const v = new DataView(out.buffer);
  values.forEach((n, i) => v.setInt32(4 * i, n));
  return out;
}

function startupReply(): Uint8Array {
  const enc = new TextEncoder();
  const parts = [
    message("R", int32s(0)),
    ...[
      ["server_version", "15.0"],
      ["client_encoding", "UTF8"],
      ["integer_datetimes", "on"],
    ].map(([k, v]) => message("S", enc.encode(`${k}\0${v}\0`))),
    message("K", int32s(4242, 1234)),
    message("Z", enc.encode("I")),
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Start a stuck server on a free loopback port.
 *
 * @returns The server.
 */
export function startStuckPg(): StuckPg {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const conns = new Set<Deno.Conn>();
  let count = 0;
  const serveConn = async (conn: Deno.Conn) => {
    const buf = new Uint8Array(64 * 1024);
    let answered = false;
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        if (!answered && n >= 8) {
          const code = new DataView(buf.buffer).getInt32(4);
          if (code === 196608) {
            answered = true;
            await conn.write(startupReply());
          } else if (code === 80877103) {
            await conn.write(new TextEncoder().encode("N")); // no SSL
          }
          // A cancel request (80877102) gets nothing.
        }
        // Queries: read and never answer.
      }
    } catch { /* closed */ }
    conns.delete(conn);
    try {
      conn.close();
    } catch { /* closed */ }
  };
  (async () => {
    try {
      for await (const conn of listener) {
        count++;
        conns.add(conn);
        serveConn(conn);
      }
    } catch { /* closed */ }
  })();
  const close = () => {
    try {
      listener.close();
    } catch { /* closed */ }
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    conns.clear();
  };
  return {
    url: `postgres://harness@127.0.0.1:${port}/team`,
    port,
    get connections() {
      return count;
    },
    close,
    [Symbol.dispose]: close,
  };
}
