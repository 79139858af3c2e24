/**
 * Test helper, run as its own process: an `Http1Server` on a free loopback
 * port with a handler that answers `{ok: true}`. Prints the port on stdout,
 * then serves until its stdin closes. Its memory is read from
 * `/proc/<pid>/status` by `http1_limits_test.ts`.
 *
 * Flags: `--allow-net=127.0.0.1`.
 *
 * @module
 */
import { Http1Server } from "../../lib/ingest/http1/mod.ts";

const json = (status: number, body: unknown) => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

if (import.meta.main) {
  const server = new Http1Server(
    () => Promise.resolve(json(200, { ok: true })),
    {
      hostname: "127.0.0.1",
      port: 0,
      maxBodyBytes: 8 * 1024 * 1024,
      onError: (err) => json(500, { ok: false, error: String(err) }),
      protocolError: (err) =>
        json(err.status, { ok: false, error: err.message }),
    },
  );
  console.log(server.addr.port);
  // Until the test closes our stdin.
  for await (const _ of Deno.stdin.readable) { /* nothing to read */ }
  await server.shutdown();
}
