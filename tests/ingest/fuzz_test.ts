import { assertEquals, assertOk } from "../_assert.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { HOSTS_DIR } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";

/** Deterministic PRNG (mulberry32), so a failing body can be replayed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEEDS: unknown[] = [
  ...scenarioFiles(`${HOSTS_DIR}/host_a/basic`).map((f) => f.body),
  ...scenarioFiles(`${HOSTS_DIR}/host_b/toolerrors`).map((f) => f.body),
  annotation({
    captureId: "fz",
    episodeId: "e",
    source: { host: "h", adapter: "a", model: null },
  }, { type: "n" }),
  {
    schema_version: "harness.host_c-hook.v1",
    hook: "tool.execute.before",
    session_id: "ses_1",
    call_id: "c1",
    tool: "read",
    args: { filePath: "x" },
  },
];

const WEIRD: unknown[] = [
  null,
  true,
  0,
  -1,
  1e308,
  "",
  "x".repeat(300),
  "../..",
  "é\u0000\ud800",
  [],
  {},
  [[[[[]]]]],
  { __proto__: { a: 1 } },
  { constructor: "x" },
  NaN,
];

function mutate(value: unknown, r: () => number, depth = 0): unknown {
  if (depth > 4 || r() < 0.15) return WEIRD[Math.floor(r() * WEIRD.length)];
  if (Array.isArray(value)) return value.map((v) => mutate(v, r, depth + 1));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const roll = r();
      if (roll < 0.1) continue; // drop a field
      out[roll < 0.15 ? k + "_" : k] = roll < 0.5 ? v : mutate(v, r, depth + 1);
    }
    return out;
  }
  return r() < 0.3 ? WEIRD[Math.floor(r() * WEIRD.length)] : value;
}

function body(r: () => number): string {
  const kind = r();
  if (kind < 0.15) {
    // Random bytes as text.
    const n = Math.floor(r() * 200);
    return Array.from(
      { length: n },
      () => String.fromCharCode(Math.floor(r() * 256)),
    ).join("");
  }
  const seed = SEEDS[Math.floor(r() * SEEDS.length)];
  const text = JSON.stringify(mutate(seed, r));
  if (kind < 0.3) return text.slice(0, Math.floor(r() * text.length)); // truncated
  if (kind < 0.35) return "[".repeat(5000) + "]".repeat(5000); // deep nesting
  return text;
}

const PATHS = [
  "/ingest",
  "/hook/host_a",
  "/hook/host_b",
  "/hook/host_c",
  "/hook/host_a?cap=fuzz_a",
  "/hook/host_b?cap=../x",
  "/hook/host_c?cap=%00",
  "/captures",
  "/capture/fuzz_a/summary",
  "/capture/..%2f..%2fetc/summary",
  "/capture/%zz/summary",
  "/",
  "/hook/",
  "/hook/host_d",
];
const METHODS = ["POST", "POST", "POST", "GET", "PUT", "DELETE"];

Deno.test("10,000 malformed or random requests across all paths: no 5xx, the server keeps answering, every chain verifies", async () => {
  await using srv = await startServer({ maxBodyBytes: 64 * 1024 });
  const r = rng(42);
  const statuses = new Map<number, number>();
  let fiveXX: string[] = [];
  const total = 10_000;
  let next = 0;
  async function worker() {
    while (next < total) {
      const i = next++;
      const path = PATHS[Math.floor(r() * PATHS.length)];
      const method = METHODS[Math.floor(r() * METHODS.length)];
      const b = method === "GET" ? undefined : body(r);
      const headers: Record<string, string> = r() < 0.9
        ? { "content-type": "application/json" }
        : {};
      const res = await fetch(srv.url + path, { method, body: b, headers });
      await res.body?.cancel();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) {
        fiveXX.push(`#${i} ${method} ${path} ${b?.slice(0, 200)}`);
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker));
  fiveXX = fiveXX.slice(0, 5);
  assertEquals(fiveXX, []);
  assertEquals([...statuses.values()].reduce((a, b) => a + b, 0), total);
  const health = await fetch(`${srv.url}/health`);
  assertEquals(health.status, 200);
  await health.body?.cancel();
  for (const id of srv.store.captureIds()) {
    const report = await srv.store.verifyCapture(id);
    assertEquals(report.ok, true, `${id}: ${report.problem?.message}`);
  }
  // Some requests were valid enough to record events, most were refused.
  assertOk(srv.server.stats!.rejected_hooks > 1000);
});

/** A valid raw request to mutate. */
function rawRequest(host: string, r: () => number): string {
  const payload = JSON.stringify(SEEDS[Math.floor(r() * SEEDS.length)]);
  const path = r() < 0.5 ? "/ingest" : "/hook/host_b?cap=fz_raw";
  if (r() < 0.3) {
    // Chunked, in two chunks.
    const cut = Math.floor(payload.length / 2);
    const a = payload.slice(0, cut);
    const b = payload.slice(cut);
    return `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${
      a.length.toString(16)
    }\r\n${a}\r\n${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`;
  }
  return `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${
    new TextEncoder().encode(payload).length
  }\r\n\r\n${payload}`;
}

const NASTY = [
  "\r",
  "\n",
  "\r\n",
  "\0",
  " ",
  ":",
  "\t",
  ",",
  "0",
  "ff",
  "\x7f",
  "é",
];

function mutateBytes(bytes: Uint8Array, r: () => number): Uint8Array {
  let out = Array.from(bytes);
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) {
    const at = Math.floor(r() * (out.length + 1));
    const what = r();
    if (what < 0.3) out[at] = Math.floor(r() * 256); // flip a byte
    else if (what < 0.55) { // insert something nasty
      const ins = Array.from(
        new TextEncoder().encode(NASTY[Math.floor(r() * NASTY.length)]),
      );
      out = [...out.slice(0, at), ...ins, ...out.slice(at)];
    } else if (what < 0.75) out.splice(at, 1 + Math.floor(r() * 8)); // delete
    else if (what < 0.85) out = out.slice(0, at); // truncate
    else { // duplicate a stretch (a repeated header, a second request)
      const len = Math.floor(r() * 40);
      out = [...out.slice(0, at), ...out.slice(at, at + len), ...out.slice(at)];
    }
  }
  return new Uint8Array(out);
}

Deno.test("3,000 mutated raw HTTP requests (flipped, inserted, cut, repeated bytes): each gets a complete answer or a close, never a 500, and the server keeps answering", async () => {
  await using srv = await startServer({
    maxBodyBytes: 64 * 1024,
    headersTimeoutMs: 2000,
    requestTimeoutMs: 2000,
  });
  const host = new URL(srv.url).host;
  const port = Number(new URL(srv.url).port);
  const r = rng(7);
  const statuses = new Map<string, number>();
  const bad: string[] = [];
  const total = 3_000;
  let next = 0;
  async function worker() {
    const buf = new Uint8Array(65536);
    while (next < total) {
      const i = next++;
      const request = mutateBytes(
        new TextEncoder().encode(rawRequest(host, r)),
        r,
      );
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(request).catch(() => 0);
      // No more bytes: a request left short ends, it does not wait.
      await conn.closeWrite().catch(() => {});
      let text = "";
      for (;;) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
      conn.close();
      const answers = text.split(/(?=HTTP\/1\.1 \d{3} )/).filter(Boolean);
      for (const a of answers) {
        const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/
          .exec(a);
        const len = Number(/content-length: (\d+)/i.exec(m?.[2] ?? "")?.[1]);
        const status = Number(m?.[1]);
        statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1);
        if (
          !m || (status >= 500 && status !== 505) ||
          (status !== 204 && new TextEncoder().encode(m[3]).length !== len)
        ) bad.push(`#${i}: ${JSON.stringify(a.slice(0, 200))}`);
      }
      if (answers.length === 0) {
        statuses.set("closed", (statuses.get("closed") ?? 0) + 1);
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker));
  assertEquals(bad.slice(0, 5), []);
  // Some mutations leave the request valid, most break it.
  assertOk((statuses.get("200") ?? 0) > 100, JSON.stringify([...statuses]));
  assertOk((statuses.get("400") ?? 0) > 100, JSON.stringify([...statuses]));
  const health = await (await fetch(`${srv.url}/health`)).json();
  assertEquals(health.ok, true);
  assertOk(health.stats.connections.malformed > 100);
  for (const id of srv.store.captureIds()) {
    const report = await srv.store.verifyCapture(id);
    assertEquals(report.ok, true, `${id}: ${report.problem?.message}`);
  }
});
