import { assertEquals, assertOk } from "../_assert.ts";
import { SCHEMA_VERSION } from "../../lib/trace/event.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { IngestConfigError, IngestServer } from "../../lib/ingest/server.ts";
import { writeActiveCapture } from "../../lib/store/active_capture.ts";
import { fixedContext } from "../_helpers.ts";
import { startServer } from "../_server.ts";

const hookA = {
  session_id: "s-1",
  hook_event_name: "UserPromptSubmit",
  prompt: "hello",
};

async function post(url: string, body: BodyInit, headers: HeadersInit = {}) {
  const res = await fetch(url, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : null };
}

Deno.test("POST /ingest seals a canonical event and answers its sequence and hash", async () => {
  await using srv = await startServer();
  const ev = annotation(fixedContext("cap_http"), { type: "note" });
  const r = await post(`${srv.url}/ingest`, JSON.stringify(ev));
  assertEquals(r.status, 200);
  assertEquals(r.body.events[0].sequence, 1);
  assertOk(r.body.events[0].event_hash.startsWith("sha256:"));
  const batch = await post(`${srv.url}/ingest`, JSON.stringify([ev, ev]));
  assertEquals(batch.body.events.map((e: { sequence: number }) => e.sequence), [
    2,
    3,
  ]);
  assertEquals((await srv.store.verifyCapture("cap_http")).events, 3);
});

Deno.test("POST /ingest answers 400 for non-JSON, 422 for a wrong event, 413 past the limit; nothing stored changes", async () => {
  await using srv = await startServer({ maxBodyBytes: 2000 });
  const good = annotation(fixedContext("cap_e"), { type: "note" });
  await post(`${srv.url}/ingest`, JSON.stringify(good));
  const before = Deno.readTextFileSync(srv.store.spoolPath("cap_e"));
  assertEquals((await post(`${srv.url}/ingest`, "{nope")).status, 400);
  const wrong = await post(
    `${srv.url}/ingest`,
    JSON.stringify({ ...good, schema_version: "x" }),
  );
  assertEquals(wrong.status, 422);
  assertOk(/schema_version/.test(wrong.body.error));
  const badId = await post(
    `${srv.url}/ingest`,
    JSON.stringify({ ...good, capture_id: "../x" }),
  );
  assertEquals(badId.status, 422);
  const big = await post(
    `${srv.url}/ingest`,
    JSON.stringify({ ...good, payload: { x: "y".repeat(5000) } }),
  );
  assertEquals(big.status, 413);
  assertEquals(Deno.readTextFileSync(srv.store.spoolPath("cap_e")), before);
  assertEquals(SCHEMA_VERSION, good.schema_version);
});

Deno.test("hook paths answer 200 {ok:false} for bad input and 413 past the limit", async () => {
  await using srv = await startServer({ maxBodyBytes: 2000 });
  for (
    const [host, body] of [
      ["host_a", "not json"],
      ["host_a", "[1,2]"],
      ["host_a", JSON.stringify({ hook_event_name: "PreToolUse" })],
      [
        "host_b",
        JSON.stringify({
          session_id: "../../x",
          hook_event_name: "BeforeAgent",
        }),
      ],
      ["host_c", JSON.stringify({ hook: "session.created", session_id: "s" })],
    ]
  ) {
    const r = await post(`${srv.url}/hook/${host}`, body);
    assertEquals(r.status, 200, `${host} ${body}`);
    assertEquals(r.body.ok, false);
    assertOk(r.body.error.length > 10);
  }
  const envErr = await post(
    `${srv.url}/hook/host_c`,
    JSON.stringify({ hook: "x" }),
  );
  assertOk(/harness\.host_c-hook\.v1/.test(envErr.body.error));
  const badCap = await post(
    `${srv.url}/hook/host_a?cap=../../etc`,
    JSON.stringify(hookA),
  );
  assertEquals([badCap.status, badCap.body.ok], [200, false]);
  const big = await post(
    `${srv.url}/hook/host_a`,
    JSON.stringify({ ...hookA, prompt: "x".repeat(5000) }),
  );
  assertEquals(big.status, 413);
  assertEquals(srv.store.listCaptures(), []);
});

Deno.test("unknown hook names map to no events; unknown paths 404; wrong methods 405 with Allow", async () => {
  await using srv = await startServer();
  const r = await post(
    `${srv.url}/hook/host_a?cap=c1`,
    JSON.stringify({ ...hookA, hook_event_name: "SomeFutureHook" }),
  );
  assertEquals(r.status, 204);
  assertEquals(srv.store.listCaptures(), []);
  const nf = await fetch(`${srv.url}/nope`);
  assertEquals(nf.status, 404);
  await nf.body?.cancel();
  const nh = await post(`${srv.url}/hook/host_z`, "{}");
  assertEquals(nh.status, 404);
  const m = await fetch(`${srv.url}/ingest`);
  assertEquals([m.status, m.headers.get("allow")], [405, "POST"]);
  await m.body?.cancel();
  const m2 = await post(`${srv.url}/captures`, "{}");
  assertEquals(m2.status, 405);
});

Deno.test("without cap, hook events go to the active capture, else to 'default'", async () => {
  await using srv = await startServer();
  await post(`${srv.url}/hook/host_a`, JSON.stringify(hookA));
  assertEquals(srv.store.getCapture("default")?.event_count, 1);
  writeActiveCapture(srv.root, "cap_active");
  await post(`${srv.url}/hook/host_a`, JSON.stringify(hookA));
  assertEquals(srv.store.getCapture("cap_active")?.event_count, 1);
  await post(`${srv.url}/hook/host_a?cap=explicit`, JSON.stringify(hookA));
  assertEquals(srv.store.getCapture("explicit")?.event_count, 1);
});

Deno.test("GET /captures and /capture/<id>/summary describe what was recorded", async () => {
  await using srv = await startServer();
  await post(`${srv.url}/hook/host_a?cap=c_sum`, JSON.stringify(hookA));
  const list = await (await fetch(`${srv.url}/captures`)).json();
  assertEquals(list.map((c: { capture_id: string }) => c.capture_id), [
    "c_sum",
  ]);
  const sum = await (await fetch(`${srv.url}/capture/c_sum/summary`)).json();
  assertEquals(sum.fidelity, "F1");
  assertEquals(sum.chain.ok, true);
  assertEquals(sum.episodes[0].episode_id, "s-1");
  const missing = await fetch(`${srv.url}/capture/none/summary`);
  assertEquals(missing.status, 404);
  await missing.body?.cancel();
  const bad = await fetch(`${srv.url}/capture/%E0%A4%A/summary`);
  assertEquals(bad.status, 400);
  await bad.body?.cancel();
});

Deno.test("secrets in hook payloads are redacted before sealing, and the redaction is recorded", async () => {
  await using srv = await startServer();
  const pre = {
    session_id: "s-2",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_use_id: "t1",
    tool_input: {
      command:
        "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc' https://x",
      api_key: "sk-ant-api03-abcdefghijklmnopqrstuvwx",
    },
  };
  await post(`${srv.url}/hook/host_a?cap=c_sec`, JSON.stringify(pre));
  const spool = Deno.readTextFileSync(srv.store.spoolPath("c_sec"));
  for (const secret of ["ghp_abc", "eyJhbGciOi", "sk-ant-api03"]) {
    assertEquals(spool.includes(secret), false, secret);
  }
  const [ev] = await Array.fromAsync(srv.store.readEvents("c_sec"));
  assertEquals(ev.payload.redactions, {
    bearer_token: 1,
    env_assignment: 1,
    secret_field: 1,
  });
  assertOk(
    String((ev.payload.arguments as { command: string }).command).includes(
      "GITHUB_TOKEN=[REDACTED:env_assignment]",
    ),
  );
  assertEquals((await srv.store.verifyCapture("c_sec")).ok, true);
});

Deno.test("IngestServer refuses a non-loopback address without --allow-remote and a token, and then requires the token", async () => {
  await using srv = await startServer();
  let err: unknown;
  try {
    await new IngestServer(srv.store, { host: "0.0.0.0", port: 0 }).start();
  } catch (e) {
    err = e;
  }
  assertOk(err instanceof IngestConfigError && /loopback/.test(err.message));
  try {
    await new IngestServer(srv.store, {
      host: "0.0.0.0",
      port: 0,
      allowRemote: true,
    }).start();
  } catch (e) {
    err = e;
  }
  assertOk(
    err instanceof IngestConfigError &&
      /HARNESS_INGEST_TOKEN/.test(err.message),
  );
  await using tok = await startServer({ token: "s3cret" });
  const denied = await fetch(`${tok.url}/captures`);
  assertEquals(denied.status, 401);
  await denied.body?.cancel();
  const ok = await fetch(`${tok.url}/captures`, {
    headers: { authorization: "Bearer s3cret" },
  });
  assertEquals(ok.status, 200);
  await ok.body?.cancel();
});

Deno.test("a second server on the same port fails with a clear message", async () => {
  await using srv = await startServer();
  const port = Number(new URL(srv.url).port);
  let err: unknown;
  try {
    await new IngestServer(srv.store, { port }).start();
  } catch (e) {
    err = e;
  }
  assertOk(
    err instanceof IngestConfigError && /in use/.test(err.message),
    String(err),
  );
});

Deno.test("a web page can neither write nor read: Origin refused, Host must be the server's loopback name, writes need application/json", async () => {
  await using srv = await startServer();
  const port = new URL(srv.url).port;
  // A no-cors fetch from any site: text/plain with an Origin.
  const crossSite = await fetch(`${srv.url}/hook/host_a?cap=victim`, {
    method: "POST",
    headers: { origin: "http://evil.example", "content-type": "text/plain" },
    body: JSON.stringify(hookA),
  });
  assertEquals(crossSite.status, 403);
  await crossSite.body?.cancel();
  const plain = await fetch(`${srv.url}/ingest`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: JSON.stringify(annotation(fixedContext("victim"), { type: "note" })),
  });
  assertEquals(plain.status, 415);
  await plain.body?.cancel();
  assertEquals(srv.store.hasCapture("victim"), false);
  // DNS rebinding: the page's own name in Host.
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(port),
  });
  await conn.write(
    new TextEncoder().encode(
      `GET /captures HTTP/1.1\r\nhost: evil.example:${port}\r\nconnection: close\r\n\r\n`,
    ),
  );
  const buf = new Uint8Array(4096);
  const n = await conn.read(buf);
  conn.close();
  assertOk(
    new TextDecoder().decode(buf.subarray(0, n ?? 0)).startsWith(
      "HTTP/1.1 403",
    ),
  );
  // The server's own names work.
  for (const name of ["localhost", "127.0.0.1"]) {
    const c = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
    await c.write(
      new TextEncoder().encode(
        `GET /health HTTP/1.1\r\nhost: ${name}:${port}\r\nconnection: close\r\n\r\n`,
      ),
    );
    const b = new Uint8Array(4096);
    const m = await c.read(b);
    c.close();
    assertOk(
      new TextDecoder().decode(b.subarray(0, m ?? 0)).startsWith(
        "HTTP/1.1 200",
      ),
      name,
    );
  }
});
