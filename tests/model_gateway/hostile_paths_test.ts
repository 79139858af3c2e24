/**
 * Hostile request targets on the model routes (issue 44, item 10): dot
 * segments are resolved and a path that leaves the API's base path is
 * refused, so a client cannot reach other paths of the upstream's host with
 * its key.
 */
import { assertEquals, assertMatch } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { upstream } from "./_faults.ts";

/** One request written byte for byte (the target as given), its status and body. */
async function raw(
  url: string,
  { method, target, body }: { method: string; target: string; body?: string },
): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(u.port),
  });
  const b = body ?? "";
  const head = `${method} ${target} HTTP/1.1\r\nhost: ${u.host}\r\n` +
    `authorization: Bearer sk-hostile-paths-0001\r\nconnection: close\r\n` +
    (b ? `content-type: application/json\r\n` : "") +
    `content-length: ${new TextEncoder().encode(b).length}\r\n\r\n`;
  await conn.write(new TextEncoder().encode(head + b));
  const buf = new Uint8Array(65536);
  let text = "";
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  conn.close();
  const m = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n[\s\S]*?\r\n\r\n([\s\S]*)$/.exec(
    text,
  );
  return { status: Number(m?.[1] ?? 0), body: m?.[2] ?? "" };
}

Deno.test("dot segments never leave the upstream's base path", async () => {
  const up = upstream((req) =>
    Response.json({ object: "list", data: [], path: new URL(req.url).pathname })
  );
  // A base URL with a path prefix: what lies beside it must stay out of reach.
  await using s = await startServer({
    modelGateway: {
      upstreamOpenai: `${up.url}/openai/v1`,
      upstreamAnthropic: `${up.url}/anthropic`,
    },
  });
  const paths = () => up.seen.length;
  for (
    const target of [
      "/v1/../../outside-the-api",
      "/v1/../outside",
      "/v1/%2e%2e/%2E%2E/outside",
      "/v1/.%2e/x",
      "/v1/models/../../../outside",
      "/v1/..\\..\\outside",
      "/v1/models/../..",
      "/p/x/v1/../../outside",
    ]
  ) {
    const before = paths();
    const r = await raw(s.url, { method: "GET", target });
    assertEquals(paths(), before, `${target} reached the upstream`);
    assertEquals(r.status === 400 || r.status === 404, true, target);
    if (r.status === 400) {
      assertMatch(JSON.parse(r.body).error.message, /base path/);
    }
  }
  // The same for the recorded routes, on both APIs.
  const post = await raw(s.url, {
    method: "POST",
    target: "/v1/../../outside/v1/messages",
    body: JSON.stringify({ model: "m", max_tokens: 1, messages: [] }),
  });
  assertEquals(post.status, 400);
  // Resolved inside /v1/: forwarded to the resolved path, under the base.
  const inside = await raw(s.url, {
    method: "GET",
    target: "/v1/files/../models",
  });
  assertEquals(inside.status, 200);
  assertEquals(JSON.parse(inside.body).path, "/openai/v1/models");
  for (const { headers } of up.seen) {
    assertEquals(headers.get("authorization"), "Bearer sk-hostile-paths-0001");
  }
  assertEquals(up.seen.length, 1);
  await up.close();
});
