/**
 * The connections of the gateway's own HTTP/1.1 client
 * (`lib/model_gateway/http1_client/`), against a scripted upstream on
 * 127.0.0.1: an idle connection the upstream closes, an abort while the
 * answer is awaited, `close()`, and a connect that hangs.
 */
import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import { waitFor } from "../_wait.ts";
import { closeQuietly } from "./_raw_http.ts";
import { Http1Client } from "../../lib/model_gateway/http1_client/client.ts";
import { call, ok, scripted, text } from "./_scripted_upstream.ts";

Deno.test("Http1Client: an idle connection the upstream closes leaves the pool, and the next request gets a new one", async () => {
  const up = scripted(() => ({ bytes: ok("{}") }));
  const client = new Http1Client();
  try {
    assertEquals(await text(await client.send(call(up.url))), "{}");
    assertEquals(client.open, 1);
    up.dropAll();
    await waitFor("the closed connection dropped", () => client.open === 0);
    assertEquals(await text(await client.send(call(up.url))), "{}");
    assertEquals(up.accepted, 2);
  } finally {
    client.close();
    await up.close();
  }
});

Deno.test("Http1Client: an abort while the answer is awaited rejects with its reason and closes the connection", async () => {
  const up = scripted(() => ({ bytes: "" })); // never answers
  const client = new Http1Client();
  try {
    const ctrl = new AbortController();
    const sent = client.send(call(up.url, "{}", ctrl.signal));
    await waitFor("the request seen", () => up.seen.length === 1);
    ctrl.abort(new Error("the client went away"));
    await assertRejects(() => sent, /the client went away/);
    assertEquals(client.open, 0);
    await waitFor("the upstream saw the close", () => up.closedByPeer === 1);
  } finally {
    client.close();
    await up.close();
  }
});

Deno.test("Http1Client: close() closes idle connections, and a closed client refuses with a clear error", async () => {
  const up = scripted(() => ({ bytes: ok("{}") }));
  const client = new Http1Client();
  try {
    await Promise.all(
      [1, 2, 3].map(async () => await text(await client.send(call(up.url)))),
    );
    assertEquals(client.open, 3);
    client.close();
    assertEquals(client.open, 0);
    await waitFor("the upstream saw three closes", () => up.closedByPeer === 3);
    await assertRejects(
      () => client.send(call(up.url)),
      /upstream client is closed/,
    );
  } finally {
    client.close();
    await up.close();
  }
});

Deno.test({
  name:
    "Http1Client: a connect that hangs (the upstream's accept queue full) ends when the signal aborts",
  // The client's own connect is still retrying its handshake when the test
  // ends; it fails once the listener is gone and is closed if it came late.
  sanitizeOps: false,
  fn: async () => {
    // A listener that never accepts: once its queue is full, a handshake is
    // dropped and the connect waits.
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    const filled: Deno.Conn[] = [];
    const fills = Array.from(
      { length: 2000 },
      () =>
        Deno.connect({ hostname: "127.0.0.1", port }).then((c) => {
          filled.push(c);
        }),
    );
    let seen = -1;
    await waitFor(
      "the accept queue full (no connect completes between looks)",
      () => {
        const now = filled.length;
        const still = now > 0 && now === seen;
        seen = now;
        return still;
      },
      { everyMs: 100 },
    );
    assertOk(filled.length < 2000, `${filled.length} connects went through`);
    const client = new Http1Client();
    try {
      const ctrl = new AbortController();
      const sent = client.send(
        call(`http://127.0.0.1:${port}`, "{}", ctrl.signal),
      );
      ctrl.abort(new Error("the deadline passed"));
      await assertRejects(() => sent, /the deadline passed/);
      assertEquals(client.open, 0);
    } finally {
      client.close();
      for (const c of filled) closeQuietly(c);
      l.close();
      // The dropped handshakes fail once there is no listener.
      await Promise.allSettled(fills);
    }
  },
});
