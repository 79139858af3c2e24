/**
 * The shutdown line counts every event the run recorded: the model
 * gateway's too (it said "stopped (0 events recorded)" after ~265 gateway
 * events; issue 48, item 6).
 *
 * @module
 */
import OpenAI from "openai";
import { join } from "node:path";
import { assertEquals, assertOk } from "../_assert.ts";
import { serve } from "../../lib/cli/cmd_serve.ts";
import { tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";
import { startUpstreams } from "../model_gateway/_upstreams.ts";

Deno.test("serve's shutdown line counts the model gateway's events", async () => {
  await using dir = await tempDir();
  await using up = startUpstreams();
  const root = join(dir.path, "store");
  const lines: string[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((r) => stop = r);
  const done = serve({
    root,
    host: "127.0.0.1",
    port: 0,
    allowRemote: false,
    noRedact: false,
    stopSignal,
    modelGateway: { upstreamOpenai: up.openaiBase },
  }, { out: (t) => lines.push(t), err: () => {} });
  await waitFor("the server's start line", () => lines.length);
  const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(lines[0])![1];
  const client = new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: "k",
    maxRetries: 0,
  });
  up.push({ text: "Hello." }, { text: "Again." });
  await client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "Hi" }],
  });
  await client.chat.completions.create({
    model: "m",
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
      { role: "user", content: "Once more" },
    ],
  });
  stop();
  assertEquals(await done, 0);
  const last = lines.at(-1)!;
  const n = Number(/stopped \((\d+) events? recorded\)/.exec(last)?.[1]);
  assertOk(n >= 8, last);
});
