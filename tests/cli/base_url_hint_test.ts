/**
 * A model API client whose base URL has its `/v1` wrong hears which path it
 * meant and what to set, from a real `serve` through the official clients:
 * `openai` without `/v1` (its base URL ends with it), `@anthropic-ai/sdk`
 * with `/v1` (it adds `/v1` itself: the path would be `/v1/v1/messages`).
 */
import { assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { join } from "node:path";
import OpenAI from "openai";
import {
  Anthropic,
  type AnthropicApiError,
} from "../model_gateway/_anthropic_sdk.ts";
import { tempDir } from "../_helpers.ts";
import { startServe } from "./_serve_process.ts";

Deno.test("OPENAI_BASE_URL without /v1: the 404 says 'did you mean /v1/chat/completions?' and to set the base URL to …/v1", async () => {
  await using dir = await tempDir();
  await using serve = await startServe(join(dir.path, "store"), {
    env: {
      HARNESS_UPSTREAM_OPENAI: "http://127.0.0.1:9/v1",
      HARNESS_UPSTREAM_ANTHROPIC: "http://127.0.0.1:9",
    },
  });
  const client = new OpenAI({
    baseURL: serve.url, // the mistake: no /v1
    apiKey: "sk-local",
    maxRetries: 0,
  });
  const err = await assertRejects(() =>
    client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    })
  ) as InstanceType<typeof OpenAI.APIError>;
  assertEquals(err.status, 404);
  assertMatch(err.message, /did you mean \/v1\/chat\/completions\?/);
  assertMatch(
    err.message,
    /set OPENAI_BASE_URL \(or base_url\) to this server's URL followed by \/v1/,
  );
  const responses = await assertRejects(() =>
    client.responses.create({ model: "m", input: "hi" })
  ) as InstanceType<typeof OpenAI.APIError>;
  assertMatch(responses.message, /did you mean \/v1\/responses\?/);
  // In the API's own error shape (what any client of that API reads).
  const raw = await fetch(`${serve.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [] }),
  });
  assertEquals(raw.status, 404);
  const shaped = await raw.json();
  assertEquals(typeof shaped.error, "object");
  assertMatch(shaped.error.message, /did you mean \/v1\/chat\/completions\?/);
  // A path that is no model API's gets no such hint.
  const other = await fetch(`${serve.url}/nothing-here`);
  assertEquals(other.status, 404);
  assertEquals((await other.json()).error, "No route /nothing-here");
});

Deno.test("ANTHROPIC_BASE_URL ending with /v1: /v1/v1/messages is answered 404 'did you mean /v1/messages?', not forwarded (502)", async () => {
  await using dir = await tempDir();
  await using serve = await startServe(join(dir.path, "store"), {
    env: {
      HARNESS_UPSTREAM_OPENAI: "http://127.0.0.1:9/v1",
      // Nothing listens there: forwarded, the request would get 502.
      HARNESS_UPSTREAM_ANTHROPIC: "http://127.0.0.1:9",
    },
  });
  const client = new Anthropic({
    baseURL: `${serve.url}/v1`, // the mistake: the SDK adds /v1 itself
    apiKey: "sk-ant-local",
    maxRetries: 0,
  });
  const err = await assertRejects(() =>
    client.messages.create({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    })
  ) as AnthropicApiError;
  assertEquals(err.status, 404, err.message);
  assertMatch(err.message, /did you mean \/v1\/messages\?/);
  assertMatch(
    err.message,
    /set ANTHROPIC_BASE_URL to this server's URL, without \/v1/,
  );
  const health = await (await fetch(`${serve.url}/health`)).json();
  assertEquals(health.model_gateway.upstream_errors, 0, "nothing forwarded");
});
