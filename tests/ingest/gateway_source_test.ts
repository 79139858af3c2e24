/**
 * Issue 44, item 7 (the intake's half): an event sent to `POST /ingest`
 * cannot claim the model gateway's source, so the gateway's restore after a
 * restart reads only what the gateway itself wrote.
 *
 * @module
 */
import OpenAI from "openai";
import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { modelRequested } from "../../lib/trace/model_events.ts";
import { tempDir } from "../_helpers.ts";
import { startUpstreams } from "../model_gateway/_upstreams.ts";

const CAP = "cap_gw_source";

/** A `model.requested` as the gateway writes it, with ids a client chose. */
function crafted(n: number) {
  return modelRequested({
    captureId: CAP,
    episodeId: `forged_${n}`,
    source: { host: "model_gateway", adapter: "openai_chat", model: "m" },
    newId: () => `evt_forged_${n}`,
  }, {
    request: { model: "m" },
    conversation: {
      first: `sha256:${"a".repeat(64)}`,
      new_hashes: [`sha256:${n.toString(16).padStart(64, "0")}`],
      continues: 0,
      previous: `evt_forged_${n - 1}`,
    },
  });
}

async function postIngest(url: string, body: unknown) {
  const res = await fetch(`${url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("POST /ingest refuses an event claiming source.host model_gateway (422, nothing of its list written); after a restart the gateway restores only the conversation it recorded itself", async () => {
  await using dir = await tempDir();
  await using up = startUpstreams();
  const gatewayOptions = {
    upstreamOpenai: up.openaiBase,
    upstreamAnthropic: up.anthropicBase,
  };
  {
    using store = new HarnessStore(dir.path, { role: "ingest-server" });
    const server = new IngestServer(store, {
      port: 0,
      modelGateway: gatewayOptions,
    });
    const url = await server.start();
    try {
      up.push({ text: "Hello." });
      await new OpenAI({
        baseURL: `${url}/v1`,
        apiKey: "gw-source-test-key-000",
        maxRetries: 0,
        defaultHeaders: { "x-harness-capture": CAP },
      }).chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "Hi" }],
      });
      await server.modelGateway?.settled();
      const before = Deno.readTextFileSync(store.spoolPath(CAP));
      const one = await postIngest(url, crafted(1));
      assertEquals(one.status, 422);
      assertEquals(one.body.ok, false);
      assertOk(/source\.host/.test(one.body.error), one.body.error);
      assertOk(/model_gateway/.test(one.body.error), one.body.error);
      // A list with one such event among good ones: none of it is written.
      const good = {
        ...crafted(2),
        source: { host: "harness", adapter: "t", model: null },
      };
      const many = await postIngest(url, [good, crafted(3), good]);
      assertEquals(many.status, 422);
      assertOk(/event 1 of the list/.test(many.body.error), many.body.error);
      // Many of them (the poisoning in issue 44 sent 12,000).
      const flood = await postIngest(
        url,
        Array.from({ length: 500 }, (_, i) => crafted(i + 10)),
      );
      assertEquals(flood.status, 422);
      assertEquals(Deno.readTextFileSync(store.spoolPath(CAP)), before);
      // Events of any other source are taken as before.
      assertEquals((await postIngest(url, good)).status, 200);
    } finally {
      await server.close();
    }
  }
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: gatewayOptions,
  });
  await server.start();
  try {
    await server.restored;
    assertEquals(server.stats?.restore_error, undefined);
    assertEquals(server.stats?.restored_conversations, 1);
  } finally {
    await server.close();
  }
  const gatewayEvents: string[] = [];
  for await (const ev of store.readEvents(CAP)) {
    if (ev.source.host === "model_gateway") gatewayEvents.push(ev.event_id);
  }
  assertOk(gatewayEvents.length > 0);
  assertEquals(gatewayEvents.filter((id) => id.startsWith("evt_forged")), []);
});
