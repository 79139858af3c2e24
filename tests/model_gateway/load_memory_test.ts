/**
 * Memory under concurrency (issue 45, item 2): 256 model-like streams at
 * once through a gateway in its own process leave it under 512 MB resident,
 * every exchange recorded. Each piece `fetch` hands over sits in a 64 KiB
 * buffer; holding the pieces of 256 streams held 256 × 41 of them (main
 * at 3ca4e26: 2.36 GB in the load benchmark).
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { health, upstream } from "./_faults.ts";
import { spawnGateway } from "./_spawned.ts";
import { waitFor } from "../_wait.ts";

Deno.test("256 concurrent model-like streams: the gateway stays under 512 MB resident and records each", async () => {
  const enc = new TextEncoder();
  const event = (i: number) =>
    enc.encode(`data: ${
      JSON.stringify({
        id: "s",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{
          index: 0,
          delta: { content: `word ${i} of the answer, ` },
          finish_reason: i === 39 ? "stop" : null,
        }],
      })
    }\n\n`);
  // 256 streams open at once: each waits until all have begun.
  const streams = 256;
  let begun = 0;
  let go: () => void = () => {};
  const all = new Promise<void>((r) => go = r);
  const up = upstream(() => {
    let i = 0;
    if (++begun === streams) go();
    return new Response(
      new ReadableStream<Uint8Array>({
        async pull(ctrl) {
          if (i === 1) await all;
          // Apart, as a model streams: each its own piece.
          if (i > 0) await new Promise((r) => setTimeout(r, 15));
          if (i < 40) ctrl.enqueue(event(i++));
          else {
            ctrl.enqueue(enc.encode("data: [DONE]\n\n"));
            ctrl.close();
          }
        },
      }, { highWaterMark: 0 }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  await using dir = await tempDir();
  const gw = await spawnGateway(dir.path, { upstreamOpenai: `${up.url}/v1` });
  try {
    const texts = await Promise.all(
      Array.from({ length: streams }, async (_, n) => {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: "Bearer sk-load-test-0001",
            "x-harness-capture": "cap_load",
          },
          body: JSON.stringify({
            model: "m",
            stream: true,
            messages: [{ role: "user", content: `question ${n}` }],
          }),
        });
        return await res.text();
      }),
    );
    for (const t of texts) assertOk(t.endsWith("data: [DONE]\n\n"));
    const rss = await gw.rssMb();
    assertOk(rss <= 512, `the gateway holds ${rss.toFixed(0)} MB`);
    // Every exchange recorded (the spill takes what memory does not).
    const g = await waitFor("every exchange recorded", async () => {
      const g = (await health(gw.url)).model_gateway as Record<string, number>;
      return g.queued === 0 && g.recorded + g.record_misses >= streams
        ? g
        : null;
    }, { everyMs: 50 });
    assertEquals([g.recorded, g.record_misses], [streams, 0]);
  } finally {
    await gw.stop();
    await up.close();
  }
});
