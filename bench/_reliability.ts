/**
 * Reliability checks shared by the test suite (small) and
 * `deno task bench reliability` (full size):
 *
 * - **kill -9 over HTTP**: a real `ingest.ts serve` process takes events
 *   from a client that counts acknowledgements, and is killed with SIGKILL
 *   at a random moment, again and again; after each kill the store must
 *   hold every acknowledged event exactly once, in a chain that verifies.
 * - **torn-tail sweep**: the last line of a spool is cut at every byte
 *   offset; opening the store must repair it (the torn bytes set aside),
 *   and the chain must verify with the events before it.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import { annotation } from "../lib/trace/mod.ts";
import { encodeOtlpProtobuf } from "../lib/otel/protobuf_encode.ts";
import { serveArgs } from "./_serve_args.ts";

const INGEST = new URL("../ingest.ts", import.meta.url).pathname;

/** Deterministic pseudo-random numbers. */
function* randoms(seed: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (x * 1103515245 + 12345) % 2147483648;
    yield x / 2147483648;
  }
}

/** What the kill -9 run found. */
export interface KillReport {
  /** Kills done. */
  kills: number;
  /** Events the server acknowledged in all. */
  acknowledged: number;
  /** Of those, missing from the store after the kills. */
  lost: number;
  /** Events stored more than once. */
  duplicated: number;
  /** Whether the chain verified after every kill. */
  chains_ok: boolean;
  /** Torn tails repaired on restart. */
  repaired: number;
}

/**
 * Start `ingest.ts serve` as its own process, with the serve task's narrow
 * permissions, on a free loopback port, and wait for its URL.
 *
 * @param root Store root.
 * @param options `ulimit`: the process's file-handle limit (`ulimit -n`);
 *   `args`: more serve flags.
 * @returns The process and its base URL.
 */
export async function startServeProcess(
  root: string,
  options: { ulimit?: number; args?: string[] } = {},
): Promise<{ child: Deno.ChildProcess; url: string }> {
  const args = serveArgs(root, { args: options.args });
  const child =
    (options.ulimit === undefined
      ? new Deno.Command(Deno.execPath(), {
        args,
        stdout: "piped",
        stderr: "piped",
      })
      : new Deno.Command("bash", {
        args: [
          "-c",
          `ulimit -n ${options.ulimit} && exec "$@"`,
          "bash",
          Deno.execPath(),
          ...args,
        ],
        stdout: "piped",
        stderr: "piped",
      })).spawn();
  const reader = child.stdout.getReader();
  let text = "";
  while (!/on (http:\/\/\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server did not start: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  child.stderr.cancel().catch(() => {});
  return { child, url: /on (http:\/\/\S+)/.exec(text)![1] };
}

/**
 * Kill the server with SIGKILL `kills` times while a client sends events.
 *
 * @param root An empty folder for the store.
 * @param kills How many kills.
 * @param seed Seed of the kill moments.
 * @returns What was found.
 */
export async function killOverHttp(
  root: string,
  kills: number,
  seed = 20261123,
): Promise<KillReport> {
  const r = randoms(seed);
  const acked = new Set<string>();
  let n = 0;
  let chainsOk = true;
  let repaired = 0;
  const ctx = {
    captureId: "crash_http",
    episodeId: "ep_1",
    source: { host: "harness", adapter: "kill-test", model: null },
  };
  for (let k = 0; k < kills; k++) {
    const { child, url } = await startServeProcess(root);
    const killAfter = 20 + Math.floor(r.next().value * 150);
    const deadline = Date.now() + killAfter;
    let killed = false;
    const killer = setTimeout(() => {
      killed = true;
      child.kill("SIGKILL");
    }, killAfter);
    while (!killed || Date.now() < deadline) {
      const id = `k${k}_${n++}`;
      const body = JSON.stringify([
        annotation(ctx, { type: "note", id }),
      ]);
      try {
        const res = await fetch(`${url}/ingest`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        const answer = await res.json();
        if (res.ok && answer.ok) acked.add(id);
      } catch {
        break; // the server is gone
      }
      if (killed) break;
    }
    clearTimeout(killer);
    if (!killed) child.kill("SIGKILL");
    await child.status;
    // Restart as the library would: repair, then check.
    using store = new HarnessStore(root);
    repaired += store.findings.filter((f) => f.kind === "torn_tail_repaired")
      .length;
    const report = await store.verifyCapture("crash_http");
    if (!report.ok) chainsOk = false;
  }
  using store = new HarnessStore(root, { readOnly: true });
  const seen = new Map<string, number>();
  for await (const ev of store.readEvents("crash_http")) {
    const id = String(ev.payload.id);
    seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  let lost = 0;
  for (const id of acked) if (!seen.has(id)) lost++;
  const duplicated = [...seen.values()].filter((c) => c > 1).length;
  return {
    kills,
    acknowledged: acked.size,
    lost,
    duplicated,
    chains_ok: chainsOk,
    repaired,
  };
}

/** What the torn-tail sweep found. */
export interface SweepReport {
  /** Offsets tried (every byte of the last line but its end). */
  offsets: number;
  /** Offsets after which the store opened, repaired and verified. */
  repaired_and_verified: number;
  /** Offsets where the torn bytes were set aside exactly. */
  set_aside_exactly: number;
}

/**
 * Cut the last line of a spool at every byte offset and reopen.
 *
 * @param root An empty folder.
 * @param lineBytes About how long the last line is.
 * @returns What was found.
 */
export async function tornTailSweep(
  root: string,
  lineBytes: number,
): Promise<SweepReport> {
  // Deterministic events, so the same lines can be written twice.
  let t = Date.parse("2026-01-01T00:00:00.000Z");
  let n = 0;
  const ctx = () => ({
    captureId: "torn",
    episodeId: "ep_1",
    source: { host: "harness", adapter: "sweep", model: null },
    now: () => new Date(t += 1),
    newId: () => `evt_torn_${++n}`,
  });
  const events = (c: ReturnType<typeof ctx>) => [
    ...[0, 1, 2].map((i) => annotation(c, { type: "note", i })),
    annotation(c, { type: "note", pad: "p".repeat(lineBytes) }),
  ];
  // The full fourth line, as a writer would have sealed it.
  const scratch = `${root}/scratch`;
  Deno.mkdirSync(scratch);
  {
    using store = new HarnessStore(scratch);
    const sink = store.sink("torn");
    for (const ev of events(ctx())) sink.emit(ev);
  }
  const full = Deno.readFileSync(`${scratch}/captures/torn.jsonl`);
  Deno.removeSync(scratch, { recursive: true });
  // The store under test acknowledged only the first three.
  t = Date.parse("2026-01-01T00:00:00.000Z");
  n = 0;
  {
    using store = new HarnessStore(root);
    const sink = store.sink("torn");
    for (const ev of events(ctx()).slice(0, 3)) sink.emit(ev);
  }
  const path = `${root}/captures/torn.jsonl`;
  const lastStart = full.lastIndexOf(10, full.length - 2) + 1;
  const report: SweepReport = {
    offsets: 0,
    repaired_and_verified: 0,
    set_aside_exactly: 0,
  };
  for (let cut = lastStart + 1; cut < full.length - 1; cut++) {
    report.offsets++;
    const torn = full.subarray(0, cut);
    Deno.writeFileSync(path, torn);
    // Anything set aside earlier is cleared so each offset is judged alone.
    for (const e of Deno.readDirSync(`${root}/captures`)) {
      if (e.name !== "torn.jsonl") {
        Deno.removeSync(`${root}/captures/${e.name}`);
      }
    }
    using store = new HarnessStore(root);
    const f = store.findings.find((x) => x.kind === "torn_tail_repaired");
    const spool = Deno.readFileSync(path);
    const verified = await store.verifyCapture("torn");
    const ok = f !== undefined && spool.length === lastStart &&
      verified.ok && verified.events === 3;
    if (ok) report.repaired_and_verified++;
    const aside = [...Deno.readDirSync(`${root}/captures`)].find((e) =>
      e.name !== "torn.jsonl" && e.isFile
    );
    if (aside) {
      const saved = Deno.readFileSync(`${root}/captures/${aside.name}`);
      const want = torn.subarray(lastStart);
      if (
        saved.length === want.length && saved.every((b, i) => b === want[i])
      ) report.set_aside_exactly++;
    }
  }
  return report;
}

/** What a database that never answers a query did to the CLI and the server. */
export interface StuckDbReport {
  /** Each CLI call against it: exit code, milliseconds, whether its message said what to do. */
  calls: { command: string; code: number; ms: number; says_why: boolean }[];
  /** Events the replicating server acknowledged meanwhile. */
  acknowledged: number;
  /** Of those, missing from the store after the server stopped. */
  lost: number;
  /** From `ingest.ts stop` to the server process's end, in ms. */
  stop_ms: number;
  /** Whether the server ended by itself (not killed by `stop` after 5 s). */
  stopped_itself: boolean;
  /** Events `/health` counted as waiting for the database before the stop. */
  lag_events: number;
}

/**
 * A database that completes the start-up and never answers a query
 * (`tests/team/_stuck_pg.ts`): `capture list --db`, `db migrate`,
 * `store push` and `compile --db` run as their own processes under the
 * tasks' narrow flags, then a server replicating to it takes events and is
 * stopped with `ingest.ts stop`.
 *
 * @param root An empty folder for the store.
 * @param events Events to send the replicating server.
 * @returns What was found.
 */
export async function stuckDatabase(
  root: string,
  events = 200,
): Promise<StuckDbReport> {
  const { startStuckPg } = await import("../tests/team/_stuck_pg.ts");
  using pg = startStuckPg();
  const compile = new URL("../compile.ts", import.meta.url).pathname;
  const flags = [
    "run",
    "--allow-read",
    `--allow-write=${root}`,
    `--allow-net=127.0.0.1`,
    "--allow-env=HARNESS_ROOT,HARNESS_DB_URL,PG*,HOME,USER",
  ];
  {
    using store = new HarnessStore(root);
    store.sink("c").emit(annotation({
      captureId: "c",
      episodeId: "ep_1",
      source: { host: "harness", adapter: "stuck-db", model: null },
    }, { type: "note" }));
  }
  const calls: StuckDbReport["calls"] = [];
  for (
    const [label, entry, args] of [
      ["capture list --db", INGEST, ["capture", "list", "--db", pg.url]],
      ["db migrate", INGEST, ["db", "migrate", "--db", pg.url]],
      ["store push", INGEST, ["store", "push", "--to", pg.url, "--root", root]],
      ["compile --db", compile, [
        "--db",
        pg.url,
        "--capture",
        "c",
        "--out",
        `${root}/out`,
      ]],
    ] as const
  ) {
    const t0 = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...flags, entry, ...args],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    calls.push({
      command: label,
      code: out.code,
      ms: Math.round(performance.now() - t0),
      says_why: /did not answer .* within/.test(err) &&
        /PostgreSQL is running/.test(err),
    });
  }
  const { child, url } = await startServeProcess(root, {
    args: ["--replicate", pg.url],
  });
  const acked = new Set<string>();
  const ctx = {
    captureId: "stuck_db",
    episodeId: "ep_1",
    source: { host: "harness", adapter: "stuck-db", model: null },
  };
  for (let i = 0; i < events; i++) {
    const id = `s${i}`;
    const res = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([annotation(ctx, { type: "note", id })]),
    });
    const answer = await res.json();
    if (res.ok && answer.ok) acked.add(id);
  }
  const health = await (await fetch(`${url}/health`)).json();
  const lag = Number(health.replication?.lag_events ?? 0);
  const t0 = performance.now();
  const stop = await new Deno.Command(Deno.execPath(), {
    args: [...flags, INGEST, "stop", "--root", root],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await child.status;
  const stopMs = Math.round(performance.now() - t0);
  const stopText = new TextDecoder().decode(stop.stdout);
  using store = new HarnessStore(root, { readOnly: true });
  const seen = new Set<string>();
  for await (const ev of store.readEvents("stuck_db")) {
    seen.add(String(ev.payload.id));
  }
  return {
    calls,
    acknowledged: acked.size,
    lost: [...acked].filter((id) => !seen.has(id)).length,
    stop_ms: stopMs,
    stopped_itself: stop.success && !/was killed/.test(stopText),
    lag_events: lag,
  };
}

/**
 * `VmRSS` and `VmHWM` (peak) of a process, in KiB. Read through `cat`: Deno
 * asks for all permissions to read another process's `/proc` files.
 *
 * @param pid The process.
 * @returns Its resident and peak resident memory.
 */
export async function processMemory(
  pid: number,
): Promise<{ rss: number; peak: number }> {
  const out = await new Deno.Command("cat", {
    args: [`/proc/${pid}/status`],
    stdout: "piped",
  }).output();
  const status = new TextDecoder().decode(out.stdout);
  const kib = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/**
 * Start a process's peak (`VmHWM`) afresh at its current RSS (Linux: 5 in
 * `clear_refs`).
 *
 * @param pid The process (ours).
 * @returns Whether the peak was reset.
 */
async function resetPeak(pid: number): Promise<boolean> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `echo 5 > /proc/${pid}/clear_refs`],
    stderr: "null",
  }).output();
  return out.success;
}

/**
 * `unpacked` zero bytes through `CompressionStream("gzip")`: a gzip bomb
 * (1 GiB of zeros is ~1 MiB of gzip).
 *
 * @param unpacked Bytes it unpacks to.
 * @returns The gzip bytes.
 */
export async function gzipZeros(unpacked: number): Promise<Uint8Array> {
  const gzip = new CompressionStream("gzip");
  const writer = gzip.writable.getWriter();
  const out = new Response(gzip.readable).arrayBuffer();
  const zeros = new Uint8Array(Math.min(unpacked, 16 << 20));
  for (let left = unpacked; left > 0; left -= zeros.length) {
    await writer.write(zeros.subarray(0, Math.min(left, zeros.length)));
  }
  await writer.close();
  return new Uint8Array(await out);
}

/** What a gzip bomb on `POST /v1/traces` did to a serve process. */
export interface OtlpBombReport {
  /** Gzip bytes sent, and what they unpack to. */
  sent: number;
  unpacked: number;
  /** The answer's status and error. */
  status: number;
  error: string;
  /** From the request to its answer, in ms. */
  ms: number;
  /** The server's RSS before (idle, after a warm-up), in KiB. */
  idle_kib: number;
  /** Its peak RSS while answering (`VmHWM`, reset before), in KiB. */
  peak_kib: number;
  /** Whether the peak was reset before the bomb (else it is since start). */
  peak_reset: boolean;
  /** Whether `/health` answered 200 afterwards. */
  health_after: boolean;
}

/**
 * Send a gzip bomb to a real `ingest.ts serve` process's `POST /v1/traces`
 * and watch its memory: idle after a warm-up (valid gzip requests and a
 * small bomb), then the peak while it answers.
 *
 * @param root An empty folder for the store.
 * @param bomb The gzip body (see {@linkcode gzipZeros}).
 * @param unpacked What it unpacks to (for the report).
 * @returns What was found.
 */
export async function otlpBomb(
  root: string,
  bomb: Uint8Array,
  unpacked: number,
): Promise<OtlpBombReport> {
  const { child, url } = await startServeProcess(root);
  const post = (body: Uint8Array) =>
    fetch(`${url}/v1/traces`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
      body: body as Uint8Array<ArrayBuffer>,
    });
  try {
    const small = await gzipZeros(16 << 20);
    const valid = new Uint8Array(
      await new Response(
        new Blob([JSON.stringify({ resourceSpans: [] })]).stream()
          .pipeThrough(new CompressionStream("gzip")),
      ).arrayBuffer(),
    );
    for (let i = 0; i < 5; i++) {
      await (await post(valid)).body?.cancel();
      await (await post(small)).body?.cancel();
    }
    const idle = await processMemory(child.pid);
    const reset = await resetPeak(child.pid);
    const t0 = performance.now();
    const res = await post(bomb);
    const answer = await res.json().catch(() => ({}));
    const ms = performance.now() - t0;
    const after = await processMemory(child.pid);
    const health = await fetch(`${url}/health`);
    await health.body?.cancel();
    return {
      sent: bomb.length,
      unpacked,
      status: res.status,
      error: String(answer.error ?? ""),
      ms: Math.round(ms),
      idle_kib: idle.rss,
      peak_kib: after.peak,
      peak_reset: reset,
      health_after: health.status === 200,
    };
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}

/** The shape of {@linkcode maximalOtlpRequest}'s request. */
export interface MaximalOtlpShape {
  /** Spans in all. @default 10_100 (100 past the cap) */
  spans?: number;
  /** Attributes per span. @default 19 (190,000 at the span cap, within the attribute cap) */
  attributes?: number;
  /** Spans per trace (the first its root). @default 10 */
  perTrace?: number;
  /** OTLP JSON instead of protobuf. @default false */
  json?: boolean;
}

/**
 * A maximal OTLP request: GenAI tool spans, at the intake's caps of spans
 * and attributes, and some spans past them.
 *
 * @param shape Spans, attributes per span, spans per trace, JSON or
 *   protobuf.
 * @returns The body.
 */
export function maximalOtlpRequest(shape: MaximalOtlpShape = {}): Uint8Array {
  const spans = shape.spans ?? 10_100;
  const perSpan = shape.attributes ?? 19;
  const perTrace = shape.perTrace ?? 10;
  const hex = (n: number, digits: number) =>
    (n + 1).toString(16).padStart(digits, "0");
  const str = (key: string, stringValue: string) => ({
    key,
    value: { stringValue },
  });
  const list = [];
  for (let i = 0; i < spans; i++) {
    const trace = Math.floor(i / perTrace);
    const root = trace * perTrace;
    const attributes = [
      str("gen_ai.operation.name", "execute_tool"),
      str("gen_ai.tool.name", `tool_${i % 7}`),
      str("gen_ai.tool.call.id", `call_${i}`),
      str("gen_ai.tool.call.arguments", JSON.stringify({ order: `O-${i}` })),
      str("gen_ai.tool.call.result", JSON.stringify({ ok: true })),
    ];
    for (let k = attributes.length; k < perSpan; k++) {
      attributes.push(str(`app.d${k}`, `v${k}.${i}`));
    }
    list.push({
      traceId: hex(trace, 32),
      spanId: hex(i, 16),
      ...(i === root ? {} : { parentSpanId: hex(root, 16) }),
      name: `execute_tool tool_${i % 7}`,
      kind: 1,
      startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1000n),
      endTimeUnixNano: String(1_700_000_000_000_000_500n + BigInt(i) * 1000n),
      attributes,
      status: { code: 1 },
    });
  }
  const traces = {
    resourceSpans: [{
      resource: { attributes: [str("service.name", "stall")] },
      scopeSpans: [{ scope: { name: "stall", version: "1" }, spans: list }],
    }],
  };
  return shape.json
    ? new TextEncoder().encode(JSON.stringify(traces))
    : encodeOtlpProtobuf(traces);
}

/**
 * An OTLP protobuf answer's partial success (`ExportTraceServiceResponse`:
 * field 1 holds `rejected_spans` 1 and `error_message` 2).
 *
 * @param bytes The answer body.
 * @returns Spans rejected and the message (0 and "" when empty).
 */
export function partialSuccessOf(
  bytes: Uint8Array,
): { rejected: number; message: string } {
  let at = 0;
  const varint = () => {
    let n = 0;
    for (let scale = 1;; scale *= 128) {
      const b = bytes[at++];
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
    }
  };
  let rejected = 0;
  let message = "";
  if (bytes.length === 0 || bytes[at++] !== 0x0a) return { rejected, message };
  const end = varint() + at;
  while (at < end) {
    const key = varint();
    if (key === 0x08) rejected = varint();
    else if (key === 0x12) {
      const n = varint();
      message = new TextDecoder().decode(bytes.subarray(at, at + n));
      at += n;
    } else break;
  }
  return { rejected, message };
}

/** What `/health` did while a maximal OTLP request was recorded. */
export interface OtlpStallReport {
  /** Spans sent, body bytes. */
  spans: number;
  bytes: number;
  /** The OTLP answer's status and partial success. */
  status: number;
  rejected: number;
  message: string;
  /** From the request to its answer, in ms. */
  ms: number;
  /** Each `/health` asked meanwhile (one after the other): ms to its answer. */
  health_ms: number[];
  /** Spans the intake counted as stored for it (`/health` stats). */
  stored_spans: number;
}

/**
 * Send a maximal OTLP request ({@linkcode maximalOtlpRequest}) to a real
 * `ingest.ts serve` process and ask `/health` again and again until it is
 * answered.
 *
 * @param root An empty folder for the store.
 * @param shape The request's shape.
 * @returns What was found.
 */
export async function otlpStall(
  root: string,
  shape: MaximalOtlpShape = {},
): Promise<OtlpStallReport> {
  const body = maximalOtlpRequest(shape);
  const type = shape.json ? "application/json" : "application/x-protobuf";
  const { child, url } = await startServeProcess(root);
  const health = async () => {
    const t = performance.now();
    const res = await fetch(`${url}/health`);
    const json = await res.json();
    return { ms: performance.now() - t, json };
  };
  try {
    // Warm up: the routes, and the intake with a small request.
    for (let i = 0; i < 5; i++) await health();
    const warm = await fetch(`${url}/v1/traces`, {
      method: "POST",
      headers: { "content-type": type },
      body: maximalOtlpRequest({
        spans: 20,
        json: shape.json,
      }) as Uint8Array<ArrayBuffer>,
    });
    await warm.body?.cancel();
    const before = Number((await health()).json.stats?.otlp_spans ?? 0);
    const t0 = performance.now();
    let done = false;
    const sending = fetch(`${url}/v1/traces`, {
      method: "POST",
      headers: { "content-type": type, "x-harness-capture": "stall" },
      body: body as Uint8Array<ArrayBuffer>,
    }).then(async (res) => {
      const bytes = new Uint8Array(await res.arrayBuffer());
      done = true;
      return { res, bytes, ms: performance.now() - t0 };
    });
    const partialOf = (bytes: Uint8Array) => {
      if (!shape.json) return partialSuccessOf(bytes);
      const answer = JSON.parse(new TextDecoder().decode(bytes));
      return {
        rejected: Number(answer.partialSuccess?.rejectedSpans ?? 0),
        message: String(answer.partialSuccess?.errorMessage ?? ""),
      };
    };
    const healthMs: number[] = [];
    while (!done) {
      healthMs.push((await health()).ms);
      await new Promise((r) => setTimeout(r, 5));
    }
    const { res, bytes, ms } = await sending;
    const partial = partialOf(bytes);
    const stats = (await health()).json.stats ?? {};
    return {
      spans: shape.spans ?? 10_100,
      bytes: body.length,
      status: res.status,
      rejected: partial.rejected,
      message: partial.message,
      ms: Math.round(ms),
      health_ms: healthMs.map((x) => Math.round(x * 10) / 10),
      stored_spans: Number(stats.otlp_spans ?? 0) - before,
    };
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}
