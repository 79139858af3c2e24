/**
 * Hostile upstreams and requests against the model gateway of a real
 * `ingest.ts serve` process (issue 44, items 3–6), for `deno task bench
 * reliability`: a whole answer that inflates (gzip) far past the answer
 * limit, many large streams at once, one request of 200,000 short messages
 * with `/health` asked again and again, and conversations of 100,000
 * messages each. Each reports the server's memory above idle (`VmHWM`, the
 * peak, reset before) or `/health`'s latency.
 *
 * @module
 */
import { processMemory } from "./_otlp_hostile.ts";
import { startServeProcess } from "./_reliability.ts";
import { writeActiveCapture } from "../lib/store/active_capture.ts";

/** Start a process's peak (`VmHWM`) afresh at its current RSS. */
async function resetPeak(pid: number): Promise<boolean> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `echo 5 > /proc/${pid}/clear_refs`],
    stderr: "null",
  }).output();
  return out.success;
}

/** A loopback upstream whose handler is given. */
function upstream(
  handler: (req: Request) => Response | Promise<Response>,
): { url: string; close(): Promise<void> } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    handler,
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

/** A loopback upstream answering every chat request "ok" at once. */
export function okUpstream(): { url: string; close(): Promise<void> } {
  return upstream(() =>
    Response.json({
      id: "c",
      object: "chat.completion",
      model: "m",
      choices: [{
        index: 0,
        message: { role: "assistant", content: "ok" },
        finish_reason: "stop",
      }],
    })
  );
}

/** A serve process with its model gateway aimed at an upstream. */
async function gatewayProcess(root: string, upstreamUrl: string) {
  // The capture its requests record into, as a user's `capture start` sets
  // it: the requests carry no header of ours.
  writeActiveCapture(root, "hostile");
  const { child, url } = await startServeProcess(root, {
    args: [
      "--upstream-openai",
      `${upstreamUrl}/v1`,
      "--max-body-bytes",
      String(16 * 1024 * 1024),
    ],
  });
  return {
    child,
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

function chat(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer sk-reliability-0000000000",
    },
    body: JSON.stringify(body),
  });
}

async function drain(res: Response): Promise<number> {
  let n = 0;
  for await (const c of res.body!) n += c.length;
  return n;
}

async function health(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/health`);
  return (await res.json()).model_gateway ?? {};
}

async function idle(url: string, pid: number): Promise<number> {
  for (let i = 0; i < 5; i++) await health(url);
  const { rss } = await processMemory(pid);
  await resetPeak(pid);
  return rss;
}

/** What a gzip answer inflating past the limit did. */
export interface GzipAnswerReport {
  /** Gzip bytes the upstream sent, and what they inflate to. */
  sent: number;
  inflated: number;
  /** Bytes the client got. */
  received: number;
  /** Time to the first byte and to the last, in ms. */
  first_ms: number;
  last_ms: number;
  /** Peak RSS above idle, in KiB; idle RSS in KiB. */
  peak_above_kib: number;
  idle_kib: number;
  /** `/health`'s `not_kept` after. */
  not_kept: number;
}

/**
 * A whole answer of `inflated` bytes sent as gzip through the gateway.
 *
 * @param root An empty folder for the store.
 * @param inflated Bytes the answer inflates to.
 * @returns What it did.
 */
export async function gatewayGzipAnswer(
  root: string,
  inflated = 256 * 1024 * 1024,
): Promise<GzipAnswerReport> {
  const head = '{"id":"big","object":"chat.completion","model":"m",' +
    '"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"';
  const tail = '"}}]}';
  const gzip = new CompressionStream("gzip");
  const writer = gzip.writable.getWriter();
  const packedP = new Response(gzip.readable).arrayBuffer();
  const enc = new TextEncoder();
  await writer.write(enc.encode(head));
  const filler = enc.encode("a".repeat(1 << 20));
  let left = inflated - head.length - tail.length;
  while (left > 0) {
    await writer.write(filler.subarray(0, Math.min(left, filler.length)));
    left -= filler.length;
  }
  await writer.write(enc.encode(tail));
  await writer.close();
  const packed = new Uint8Array(await packedP);
  const up = upstream(() =>
    new Response(packed, {
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
    })
  );
  const gw = await gatewayProcess(root, up.url);
  try {
    const idleKib = await idle(gw.url, gw.child.pid);
    const t0 = performance.now();
    const res = await chat(gw.url, {
      model: "m",
      messages: [{ role: "user", content: "inflate" }],
    });
    let first = 0;
    let received = 0;
    for await (const c of res.body!) {
      if (received === 0) first = performance.now() - t0;
      received += c.length;
    }
    const last = performance.now() - t0;
    const { peak } = await processMemory(gw.child.pid);
    const g = await health(gw.url);
    return {
      sent: packed.length,
      inflated,
      received,
      first_ms: Math.round(first),
      last_ms: Math.round(last),
      peak_above_kib: peak - idleKib,
      idle_kib: idleKib,
      not_kept: Number(g.not_kept ?? 0),
    };
  } finally {
    await gw.stop();
    await up.close();
  }
}

/** What many large streams at once did. */
export interface StreamsReport {
  /** Streams at once, and bytes of events each. */
  streams: number;
  each: number;
  /** Whether every client got every byte. */
  whole: boolean;
  /** Peak RSS above idle, in KiB. */
  peak_above_kib: number;
  /** `/health`: the most bytes kept at once, the budget's records degraded. */
  kept_peak: number;
  not_kept: number;
  /** Exchanges recorded and missed. */
  recorded: number;
  misses: number;
}

/**
 * `streams` streams of `each` bytes of events at once through the gateway.
 *
 * @param root An empty folder for the store.
 * @param streams How many at once.
 * @param each Bytes of events per stream.
 * @returns What it did.
 */
export async function gatewayBigStreams(
  root: string,
  streams = 24,
  each = 32 * 1024 * 1024,
): Promise<StreamsReport> {
  const piece = new TextEncoder().encode(`data: ${
    JSON.stringify({
      id: "s",
      object: "chat.completion.chunk",
      model: "m",
      choices: [{ index: 0, delta: { content: "x".repeat(16_000) } }],
    })
  }\n\n`);
  const pieces = Math.ceil(each / piece.length);
  const up = upstream(() => {
    let i = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(ctrl) {
          if (i++ < pieces) ctrl.enqueue(piece);
          else {
            ctrl.enqueue(new TextEncoder().encode("data: [DONE]\n\n"));
            ctrl.close();
          }
        },
      }, { highWaterMark: 0 }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  const gw = await gatewayProcess(root, up.url);
  try {
    await idle(gw.url, gw.child.pid);
    const idleKib = (await processMemory(gw.child.pid)).rss;
    const sizes = await Promise.all(
      Array.from({ length: streams }, async (_, n) =>
        await drain(
          await chat(gw.url, {
            model: "m",
            stream: true,
            messages: [{ role: "user", content: `stream ${n}` }],
          }),
        )),
    );
    const { peak } = await processMemory(gw.child.pid);
    let g = await health(gw.url);
    while (Number(g.queued ?? 0) > 0) {
      await new Promise((r) => setTimeout(r, 50));
      g = await health(gw.url);
    }
    const whole = piece.length * pieces + 14;
    return {
      streams,
      each,
      whole: sizes.every((s) => s === whole),
      peak_above_kib: peak - idleKib,
      kept_peak: Number(g.kept_bytes_peak ?? NaN),
      not_kept: Number(g.not_kept ?? 0),
      recorded: Number(g.recorded ?? 0),
      misses: Number(g.record_misses ?? 0),
    };
  } finally {
    await gw.stop();
    await up.close();
  }
}

/** `/health` while one large request went through. */
export interface BigRequestReport {
  /** Messages and bytes of the request. */
  messages: number;
  bytes: number;
  /** `/health` latencies (ms) while it was read, answered and recorded. */
  health_ms: number[];
  /** From the request to its answer, and to its recording, in ms. */
  answer_ms: number;
  recorded_ms: number;
  /** Whether it was recorded whole. */
  recorded: boolean;
}

/**
 * One request of `messages` short messages, `/health` asked meanwhile.
 *
 * @param root An empty folder for the store.
 * @param messages How many messages.
 * @returns What it did.
 */
export async function gatewayBigRequest(
  root: string,
  messages = 200_000,
): Promise<BigRequestReport> {
  const up = okUpstream();
  const gw = await gatewayProcess(root, up.url);
  try {
    await idle(gw.url, gw.child.pid);
    const list = Array.from({ length: messages }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `message ${i}`,
    }));
    const body = JSON.stringify({ model: "m", messages: list });
    const before = Number((await health(gw.url)).recorded ?? 0);
    const t0 = performance.now();
    let answered = 0;
    let recordedAt = 0;
    const sending = fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer sk-reliability-0000000000",
      },
      body,
    }).then(async (r) => {
      await r.arrayBuffer();
      answered = performance.now() - t0;
    });
    const healthMs: number[] = [];
    for (;;) {
      const t = performance.now();
      const g = await health(gw.url);
      healthMs.push(performance.now() - t);
      if (Number(g.recorded ?? 0) > before) {
        recordedAt = performance.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await sending;
    return {
      messages,
      bytes: body.length,
      health_ms: healthMs.map((x) => Math.round(x * 10) / 10),
      answer_ms: Math.round(answered),
      recorded_ms: Math.round(recordedAt),
      recorded: recordedAt > 0,
    };
  } finally {
    await gw.stop();
    await up.close();
  }
}

/** Memory after long conversations. */
export interface ConversationsReport {
  /** Conversations and messages each. */
  conversations: number;
  messages: number;
  /** RSS above idle after, in KiB. */
  above_kib: number;
  /** Message hashes the gateway holds (`conversation_messages`). */
  held: number;
}

/**
 * `conversations` conversations of `messages` messages each, one request
 * each.
 *
 * @param root An empty folder for the store.
 * @param conversations How many.
 * @param messages Messages each.
 * @returns What it did.
 */
export async function gatewayLongConversations(
  root: string,
  conversations = 8,
  messages = 100_000,
): Promise<ConversationsReport> {
  const up = okUpstream();
  const gw = await gatewayProcess(root, up.url);
  try {
    const idleKib = await idle(gw.url, gw.child.pid);
    for (let c = 0; c < conversations; c++) {
      const res = await chat(gw.url, {
        model: "m",
        messages: Array.from({ length: messages }, (_, i) => ({
          role: i % 2 ? "assistant" : "user",
          content: `conversation ${c}, message ${i}`,
        })),
      });
      await res.arrayBuffer();
    }
    let g = await health(gw.url);
    while (Number(g.queued ?? 0) > 0) {
      await new Promise((r) => setTimeout(r, 100));
      g = await health(gw.url);
    }
    const { rss } = await processMemory(gw.child.pid);
    return {
      conversations,
      messages,
      above_kib: rss - idleKib,
      held: Number(g.conversation_messages ?? NaN),
    };
  } finally {
    await gw.stop();
    await up.close();
  }
}

/** One row of the reliability table. */
export interface GatewayRow {
  /** What was measured. */
  name: string;
  /** What it did. */
  value: string;
  /** The bound. */
  target: string;
  /** Whether it held. */
  met: string;
}

const mb = (kib: number) => (kib / 1024).toFixed(0);

/**
 * The model gateway's rows (issue 44, items 3–6), each in its own serve
 * process over its own folder.
 *
 * @param roots Four empty folders.
 * @returns The rows.
 */
export async function gatewayRows(roots: string[]): Promise<GatewayRow[]> {
  const gzip = await gatewayGzipAnswer(roots[0]);
  const streams = await gatewayBigStreams(roots[1]);
  const big = await gatewayBigRequest(roots[2]);
  const conv = await gatewayLongConversations(roots[3]);
  const health = [...big.health_ms].sort((x, y) => x - y);
  const slowest = health[health.length - 1] ?? Infinity;
  return [
    {
      name: `model gateway: a whole answer of ${
        (gzip.sent / 1024 / 1024).toFixed(2)
      } MiB of gzip inflating to ${gzip.inflated / 1024 / 1024} MiB`,
      value: `${
        gzip.received === gzip.inflated ? "all" : gzip.received
      } bytes relayed; first byte ${gzip.first_ms} ms, last ${gzip.last_ms} ms; peak RSS ${
        mb(gzip.peak_above_kib)
      } MB above idle (${
        mb(gzip.idle_kib)
      } MB); not kept for its record: ${gzip.not_kept}`,
      target:
        "every byte, first byte < 2 s, peak < 256 MB above idle (main 3ca4e26: +1,029 MB for 256 MiB)",
      met: gzip.received === gzip.inflated && gzip.first_ms < 2000 &&
          gzip.peak_above_kib < 256 * 1024 && gzip.not_kept === 1
        ? "yes"
        : "NO",
    },
    {
      name: `model gateway: ${streams.streams} streams at once, ${
        streams.each / 1024 / 1024
      } MiB of events each`,
      value: `answers ${streams.whole ? "whole" : "NOT whole"}; peak RSS ${
        mb(streams.peak_above_kib)
      } MB above idle; kept for recording at most ${
        (streams.kept_peak / 1024 / 1024).toFixed(0)
      } MiB (budget 128); ${streams.not_kept} records degraded (not_kept), ${streams.recorded} recorded, ${streams.misses} missed`,
      target:
        "answers whole, kept ≤ 128 MiB, peak < 768 MB above idle (main: +1.5 GB for 24)",
      met: streams.whole && streams.kept_peak <= 128 * 1024 * 1024 &&
          streams.peak_above_kib < 768 * 1024 &&
          streams.recorded === streams.streams && streams.misses === 0
        ? "yes"
        : "NO",
    },
    {
      name: `model gateway: /health while one request of ${
        big.messages.toLocaleString("en")
      } messages (${
        (big.bytes / 1024 / 1024).toFixed(1)
      } MiB) is read, answered and recorded`,
      value: `slowest ${slowest.toFixed(0)} ms, median ${
        (health[health.length >> 1] ?? 0).toFixed(0)
      } ms over ${health.length} asks; answered after ${big.answer_ms} ms, recorded after ${big.recorded_ms} ms`,
      target: "every /health < 1 s (main: stalled 8.5–25 s)",
      met: big.recorded && slowest < 1000 ? "yes" : "NO",
    },
    {
      name: `model gateway: ${conv.conversations} conversations of ${
        conv.messages.toLocaleString("en")
      } messages`,
      value: `message hashes held ${conv.held.toLocaleString("en")}; RSS ${
        mb(conv.above_kib)
      } MB above idle after`,
      target:
        "held ≤ 524,288 (about 50 MB; main held all: 27 of 200,000 grew 2.1 GB)",
      met: conv.held <= 524_288 ? "yes" : "NO",
    },
  ];
}
