/**
 * A model API client whose base URL misses `/v1` (the OpenAI SDKs' base
 * URL ends with it) hears which path it meant and what to set, from a
 * real `serve` through the official `openai` client.
 */
import { assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { join } from "node:path";
import OpenAI from "openai";
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
  // A path that is no model API's gets no such hint.
  const other = await fetch(`${serve.url}/nothing-here`);
  assertEquals(other.status, 404);
  assertEquals((await other.json()).error, "No route /nothing-here");
});
