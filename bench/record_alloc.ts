/**
 * Garbage per recorded exchange, phase by phase (issue 32): the model
 * gateway's recording of real exchanges (the gateway benchmark's request
 * bodies and the local upstream's answers) through a real `HarnessStore`,
 * each phase run over N exchanges between two forced GCs, with a young
 * generation large enough that no GC runs inside a phase, so the heap's
 * growth is what the phase allocated (and `external`, the bytes of
 * ArrayBuffers). Phases take their input from the phase before, made
 * outside the measurement:
 *
 * - read: the request body and answer decoded and parsed (`JSON.parse`)
 * - wire: the wire reader (messages, their hashes, the SSE answer read)
 * - events: `exchangeEvents` (the recorder and its conversation book)
 * - redact: the store's redaction of each event's payload (a fresh rule
 *   set each run, so each exchange is redacted once by a set)
 * - seal: canonical JSON, sha256 and the line (`HashChainer.prepare`)
 * - emit: `sink.emitMany` whole (redact, seal, spool write, index rows)
 * - flush: the index flush (SQLite transaction) of those rows
 *
 * `deno run --v8-flags=--expose-gc,--max-semi-space-size=128,--min-semi-space-size=128 -A
 * bench/record_alloc.ts [N]` prints bytes per exchange for three shapes:
 * a single whole answer, a single streamed answer, the 10th turn of an
 * agent loop (each phase of the loop over all 10 turns, per turn).
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import { openaiChatWire } from "../lib/model_gateway/wires/openai_chat/read.ts";
import { identify } from "../lib/model_gateway/episode_identity.ts";
import { ConversationBook } from "../lib/model_gateway/conversation_book.ts";
import {
  type Exchange,
  exchangeEvents,
} from "../lib/model_gateway/recorder.ts";
import { SseParser } from "../lib/model_gateway/sse.ts";
import {
  DEFAULT_REDACTION_RULES,
  redactionSet,
  redactPayload,
} from "../lib/trace/redact.ts";
import { HashChainer } from "../lib/trace/chain.ts";
import type { UnsealedEvent } from "../lib/trace/event.ts";
import type {
  NormRequest,
  NormResponse,
} from "../lib/model_gateway/wire_types.ts";
import {
  type ChatMessage,
  chatRequest,
  conversationStart,
  serveModelUpstream,
  singleRequest,
  toolResult,
} from "./_model_upstream.ts";

const gc = (globalThis as unknown as { gc?: () => void }).gc;
if (!gc) {
  throw new Error(
    "Run with --v8-flags=--expose-gc,--max-semi-space-size=128,--min-semi-space-size=128 (a young generation no phase fills)",
  );
}

/** One exchange as the gateway holds it after the answer. */
interface Raw {
  body: Uint8Array;
  answer: Uint8Array | null;
  chunks: Uint8Array[];
}

/** Allocation of one phase, per exchange. */
interface Measured {
  heap: number;
  external: number;
  /** Microseconds per exchange (the least of the runs). */
  us?: number;
}

function measure<T>(n: number, run: (i: number) => T): Measured {
  // Once first, so compiled code and its feedback are not counted; then
  // the least of three runs (a run the optimizer touched counts more).
  for (let i = 0; i < n; i++) run(i);
  let best: Measured = { heap: Infinity, external: Infinity };
  let us = Infinity;
  for (let r = 0; r < 3; r++) {
    const keep: T[] = new Array(n);
    gc!();
    gc!();
    const m0 = Deno.memoryUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) keep[i] = run(i);
    const t1 = performance.now();
    const m1 = Deno.memoryUsage();
    const heap = (m1.heapUsed - m0.heapUsed) / n;
    if (heap < best.heap) {
      best = { heap, external: (m1.external - m0.external) / n };
    }
    us = Math.min(us, (t1 - t0) * 1000 / n);
  }
  best.us = us;
  return best;
}

async function fetchRaw(base: string, body: unknown): Promise<Raw> {
  const text = JSON.stringify(body);
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: text,
  });
  const raw: Raw = {
    body: new TextEncoder().encode(text),
    answer: null,
    chunks: [],
  };
  if ((res.headers.get("content-type") ?? "").includes("event-stream")) {
    for await (const c of res.body!) raw.chunks.push(c);
  } else raw.answer = new Uint8Array(await res.arrayBuffer());
  return raw;
}

/** N single exchanges, or N conversations of 10 turns (flattened, in order). */
async function exchanges(
  base: string,
  shape: "json" | "sse" | "conversation",
  n: number,
): Promise<Raw[]> {
  const out: Raw[] = [];
  for (let i = 0; i < n; i++) {
    if (shape !== "conversation") {
      out.push(await fetchRaw(base, singleRequest(i, shape === "sse")));
      continue;
    }
    const messages: ChatMessage[] = conversationStart(i);
    for (let turn = 1; turn <= 10; turn++) {
      const raw = await fetchRaw(base, chatRequest(messages, false));
      out.push(raw);
      const msg = JSON.parse(new TextDecoder().decode(raw.answer!))
        .choices[0].message;
      messages.push(msg, toolResult(msg.tool_calls[0].id, i, turn));
    }
  }
  return out;
}

function parse(raw: Raw): { body: unknown; answer: unknown } {
  return {
    body: JSON.parse(new TextDecoder().decode(raw.body)),
    answer: raw.answer
      ? JSON.parse(new TextDecoder().decode(raw.answer))
      : null,
  };
}

function wire(
  raw: Raw,
  parsed: { body: unknown; answer: unknown },
): { request: NormRequest; response: NormResponse } {
  const request = openaiChatWire.request(parsed.body);
  if (raw.answer) {
    return { request, response: openaiChatWire.response(parsed.answer) };
  }
  const acc = openaiChatWire.streamReader();
  const p = new SseParser((e, d) => acc.add(e, d));
  for (const c of raw.chunks) p.push(c);
  p.end();
  return { request, response: acc.result() };
}

async function shapeRows(
  base: string,
  shape: "json" | "sse" | "conversation",
  count: number,
): Promise<Record<string, Measured>> {
  const raws = await exchanges(base, shape, count);
  const n = raws.length;
  const rows: Record<string, Measured> = {};
  rows.read = measure(n, (i) => parse(raws[i]));
  const parsed = raws.map(parse);
  rows.wire = measure(n, (i) => wire(raws[i], parsed[i]));
  const read = raws.map((r, i) => wire(r, parsed[i]));
  const ex = (i: number, book: ConversationBook): Exchange => ({
    capture_id: "cap_alloc",
    identity: identify(book, {
      capture: "cap_alloc",
      request: read[i].request,
      client: { first: null, later: null },
    }),
    request: read[i].request,
    body: parsed[i].body,
    started: new Date(1_790_000_000_000 + i),
    status: 200,
    response: read[i].response,
    duration_ms: 1,
  });
  let fresh = new ConversationBook();
  rows.events = measure(n, (i) => {
    if (i === 0) fresh = new ConversationBook();
    return exchangeEvents(ex(i, fresh), { book: fresh });
  });
  const book = new ConversationBook();
  const events: UnsealedEvent[][] = raws.map((_, i) =>
    exchangeEvents(ex(i, book), { book })
  );
  // A fresh rule set each run: each exchange is redacted once by a set, as
  // the server meets it (a set remembers the strings it found clean).
  let set = redactionSet(DEFAULT_REDACTION_RULES);
  rows.redact = measure(n, (i) => {
    if (i === 0) set = redactionSet(DEFAULT_REDACTION_RULES);
    return events[i].map((e) => redactPayload(e.payload, set));
  });
  let chainer = new HashChainer();
  rows.seal = measure(n, (i) => {
    if (i === 0) chainer = new HashChainer();
    return events[i].map((e) => chainer.seal(e));
  });
  const root = await Deno.makeTempDir({ prefix: "record_alloc_" });
  try {
    const store = new HarnessStore(root, {
      role: "ingest-server",
      indexFlushMs: 3_600_000,
      indexFlushRows: 1_000_000,
    });
    let round = 0;
    rows.emit = measure(n, (i) => {
      if (i === 0) round++;
      return store.sink(`cap_alloc_${round}`).emitMany(
        events[i].map((e) => ({ ...e, capture_id: `cap_alloc_${round}` })),
      );
    });
    // The rows of the emit's four runs (warm-up and three) wait in the
    // buffer: one flush, measured once (a warm-up would leave it nothing).
    gc!();
    gc!();
    const m0 = Deno.memoryUsage();
    store.flush();
    const m1 = Deno.memoryUsage();
    rows.flush = {
      heap: (m1.heapUsed - m0.heapUsed) / (4 * n),
      external: (m1.external - m0.external) / (4 * n),
    };
    store.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
  rows.events_per_exchange = {
    heap: events.reduce((s, e) => s + e.length, 0) / n,
    external: 0,
  };
  rows.request_bytes = {
    heap: raws.reduce((s, r) => s + r.body.length, 0) / n,
    external: 0,
  };
  return rows;
}

if (import.meta.main) {
  const count = Number(Deno.args[0] ?? 200);
  const up = serveModelUpstream();
  const base = `http://127.0.0.1:${up.addr.port}`;
  try {
    for (const shape of ["json", "sse", "conversation"] as const) {
      const rows = await shapeRows(
        base,
        shape,
        shape === "conversation" ? count / 10 : count,
      );
      console.log(`\n${shape} (${count} exchanges), bytes per exchange:`);
      for (const [k, v] of Object.entries(rows)) {
        console.log(
          `  ${k.padEnd(20)} heap ${
            Math.round(v.heap).toString().padStart(8)
          }` +
            (v.us === undefined ? "" : `  ${v.us.toFixed(1).padStart(7)} µs`) +
            `  external ${Math.round(v.external).toString().padStart(7)}`,
        );
      }
    }
  } finally {
    await up.shutdown();
  }
}
