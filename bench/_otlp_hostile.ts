/**
 * Hostile OTLP requests against a real `ingest.ts serve` process, shared by
 * the test suite and `deno task bench reliability`:
 *
 * - **gzip bomb**: a small gzip body that unpacks to 1 GiB on
 *   `POST /v1/traces` (time to 413, the server's peak RSS above idle);
 * - **maximal request**: GenAI tool spans at the intake's caps and past
 *   them, with `/health` asked again and again while it is recorded.
 *
 * @module
 */
import { encodeOtlpProtobuf } from "../lib/otel/protobuf_encode.ts";
import { startServeProcess } from "./_reliability.ts";

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
