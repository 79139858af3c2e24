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
