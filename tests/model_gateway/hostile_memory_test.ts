/**
 * Every buffer the model gateway holds has a byte budget (issue 44, items
 * 3, 4, 5 and 6): a whole answer (decompressed) past its limit is relayed
 * as it comes and not kept; streams kept for recording share one budget,
 * past which their records are degraded (counted), never their answers; a
 * large request is read and recorded in slices, `/health` answering
 * between them; conversation memory is bounded in messages.
 */
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { tempDir } from "../_helpers.ts";
import { health, upstream } from "./_faults.ts";
import { spawnGateway } from "./_spawned.ts";

const KEY = "sk-proj-NEVERSTORED0123456789abcdefABCDEF";

async function gzip(text: string): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([text]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Read a body to its end, counting bytes, keeping none. */
async function drain(res: Response): Promise<number> {
  let n = 0;
  for await (const c of res.body!) n += c.length;
  return n;
}

function post(url: string, body: unknown, capture = "cap_mem") {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-harness-capture": capture,
    },
    body: JSON.stringify(body),
  });
}

async function eventsOf(
  s: Awaited<ReturnType<typeof startServer>>,
  cap: string,
): Promise<TraceEvent[]> {
  await s.server.modelGateway!.settled();
  const out: TraceEvent[] = [];
  for await (const ev of s.store.readEvents(cap)) out.push(ev);
  return out;
}

Deno.test("a whole answer that inflates past the limit is relayed as it comes, not held, and its record says so", async () => {
  const inflated = 96 * 1024 * 1024;
  const head = '{"id":"big","object":"chat.completion","model":"m",' +
    '"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"';
  const tail = '"}}]}';
  const packed = await gzip(
    head + "a".repeat(inflated - head.length - tail.length) + tail,
  );
  const up = upstream(() =>
    new Response(packed, {
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
    })
  );
  await using dir = await tempDir();
  const gw = await spawnGateway(dir.path, { upstreamOpenai: `${up.url}/v1` });
  try {
    const before = await gw.rssMb();
    const res = await post(gw.url, {
      model: "m",
      messages: [{ role: "user", content: "inflate" }],
    });
    assertEquals(res.status, 200);
    assertEquals(await drain(res), inflated);
    const grew = await gw.rssMb() - before;
    // The limit is 16 MiB: the 96 MiB answer was never held whole.
    // Held whole, it grew ~775 MB.
    assertOk(grew < 160, `the gateway grew ${grew.toFixed(0)} MB`);
    const g = (await health(gw.url)).model_gateway as Record<string, unknown>;
    assertEquals(g.not_kept, 1);
    assertOk(String(g.last_not_kept).includes("larger than the gateway keeps"));
  } finally {
    await gw.stop();
    await up.close();
  }
});

Deno.test("streams kept for recording share one budget: past it records are degraded and counted, answers whole", async () => {
  const streams = 8;
  const pieces = 64;
  const piece = `data: ${
    JSON.stringify({
      id: "s",
      object: "chat.completion.chunk",
      model: "m",
      choices: [{ index: 0, delta: { content: "x".repeat(8000) } }],
    })
  }\n\n`;
  // Every stream sends half, waits for all the others to get there, then ends.
  let halfway = 0;
  let release: () => void = () => {};
  const all = new Promise<void>((r) => release = r);
  const up = upstream(() => {
    let i = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        async pull(ctrl) {
          if (i === pieces / 2) {
            if (++halfway === streams) release();
            await all;
          }
          if (i++ < pieces) ctrl.enqueue(new TextEncoder().encode(piece));
          else {
            ctrl.enqueue(new TextEncoder().encode("data: [DONE]\n\n"));
            ctrl.close();
          }
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  const budget = 1024 * 1024;
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1`, maxKeptBytes: budget },
  });
  const sizes = await Promise.all(
    Array.from({ length: streams }, async (_, i) => {
      const res = await post(s.url, {
        model: "m",
        stream: true,
        messages: [{ role: "user", content: `stream ${i}` }],
      });
      return await drain(res);
    }),
  );
  const whole = piece.length * pieces + "data: [DONE]\n\n".length;
  assertEquals(sizes, Array(streams).fill(whole));
  const events = await eventsOf(s, "cap_mem");
  assertEquals(events.filter((e) => e.kind === "model.requested").length, 8);
  const degraded = events.filter((e) =>
    e.kind === "model.responded" &&
    (e.payload.error as { type?: string } | undefined)?.type === "not_kept"
  );
  assertOk(degraded.length > 0, "some records were degraded");
  const g = (await health(s.url)).model_gateway as Record<string, number>;
  assertOk(g.kept_bytes_peak <= budget, `peak ${g.kept_bytes_peak}`);
  assertEquals(g.not_kept, degraded.length);
  assertEquals(g.kept_bytes, 0);
  await up.close();
});

Deno.test("a request of 100,000 messages is read and recorded in slices: /health answers in between", async () => {
  const up = upstream(() =>
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
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1` },
    maxBodyBytes: 16 * 1024 * 1024,
  });
  const n = 100_000;
  const messages = Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: `m${i}`,
  }));
  messages.push({ role: "user", content: "last" });
  const seen = new Set<string>();
  let over = false;
  const watch = (async () => {
    while (!over) {
      const g = (await health(s.url)).model_gateway as {
        busy?: { what: string; done: number; of: number } | null;
      };
      const b = g.busy;
      if (b && b.done > 0 && b.done < b.of) seen.add(b.what);
    }
  })();
  const res = await post(s.url, { model: "m", messages }, "cap_big");
  assertEquals(res.status, 200);
  await res.arrayBuffer();
  await s.server.modelGateway!.settled();
  over = true;
  await watch;
  // /health was answered while the request's messages were read, and while
  // its events were written.
  assertEquals([...seen].sort(), ["reading", "recording"]);
  const events = await eventsOf(s, "cap_big");
  assertEquals(events.filter((e) => e.kind === "model.requested").length, 1);
  // Every message once, and the answer.
  assertEquals(events.filter((e) => e.kind === "message").length, n + 2);
  await up.close();
});

Deno.test("conversation memory is bounded in messages, however long the conversations", async () => {
  const up = upstream(() =>
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
  const max = 1000;
  await using s = await startServer({
    modelGateway: {
      upstreamOpenai: `${up.url}/v1`,
      maxConversationMessages: max,
    },
  });
  const convs = 6;
  const long = (c: number) =>
    Array.from({ length: 399 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `conversation ${c} message ${i}`,
    }));
  const episodes: string[] = [];
  for (let c = 0; c < convs; c++) {
    const res = await post(s.url, { model: "m", messages: long(c) });
    episodes.push(res.headers.get("x-harness-episode")!);
    await res.arrayBuffer();
    const g = (await health(s.url)).model_gateway as Record<string, number>;
    assertOk(g.conversation_messages <= max, `${g.conversation_messages}`);
  }
  // The latest conversation goes on in its episode.
  const next = [...long(convs - 1), { role: "assistant", content: "ok" }, {
    role: "user",
    content: "and then?",
  }];
  const res = await post(s.url, { model: "m", messages: next });
  await res.arrayBuffer();
  assertEquals(res.headers.get("x-harness-episode"), episodes.at(-1));
  await s.server.modelGateway!.settled();
  await up.close();
});
