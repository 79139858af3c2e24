import {
  assertEquals,
  assertMatch,
  assertOk,
  assertThrows,
} from "../_assert.ts";
import {
  AnthropicMessagesModel,
  MODEL_ENV_VARS,
  ModelConfigError,
  OpenAiChatModel,
  openModel,
} from "../../lib/models/mod.ts";
import { LOCAL_PLACEHOLDER_KEY } from "../../lib/models/open_model.ts";
import { completion, startOpenAiServer } from "./_openai_server.ts";
import { message, startAnthropicServer } from "./_anthropic_server.ts";

const KEY = "sk-open-model-MARMOT-55aa66bb";

Deno.test("openModel() keeps every / after the provider in the model name", async () => {
  await using s = startOpenAiServer([completion({ content: "hi" })]);
  const m = openModel("openai/meta-llama/Llama-3-8B", {
    env: { OPENAI_BASE_URL: s.baseUrl, OPENAI_API_KEY: KEY },
  });
  assertOk(m instanceof OpenAiChatModel);
  assertEquals(m.id, "openai/meta-llama/Llama-3-8B");
  await m.complete({ messages: [{ role: "user", content: "x" }] });
  assertEquals(s.requests[0].body!.model, "meta-llama/Llama-3-8B");
  assertEquals(s.requests[0].headers.authorization, `Bearer ${KEY}`);
});

Deno.test("openModel() lets --model-url win over the env base URL", async () => {
  await using s = startAnthropicServer([
    message({ content: [{ type: "text", text: "ok" }] }),
  ]);
  const m = openModel("anthropic/claude-x", {
    url: s.baseUrl,
    env: {
      ANTHROPIC_BASE_URL: "http://127.0.0.1:1",
      ANTHROPIC_API_KEY: KEY,
    },
  });
  assertOk(m instanceof AnthropicMessagesModel);
  assertEquals(m.baseUrl, s.baseUrl);
  assertEquals(
    (await m.complete({ messages: [{ role: "user", content: "x" }] })).content,
    "ok",
  );
  assertEquals(s.requests.length, 1);
});

Deno.test("openModel() prefers options.apiKey over the env key", async () => {
  await using s = startOpenAiServer([completion({ content: "hi" })]);
  await openModel("openai/m", {
    url: s.baseUrl,
    apiKey: KEY,
    env: { OPENAI_API_KEY: "sk-other-key-from-env" },
  }).complete({ messages: [{ role: "user", content: "x" }] });
  assertEquals(s.requests[0].headers.authorization, `Bearer ${KEY}`);
});

Deno.test("openModel() sends a placeholder key to a loopback OpenAI-compatible server", async () => {
  await using s = startOpenAiServer([completion({ content: "local" })]);
  const m = openModel("openai/qwen3", { url: s.baseUrl, env: {} });
  assertEquals(
    (await m.complete({ messages: [{ role: "user", content: "x" }] })).content,
    "local",
  );
  assertEquals(
    s.requests[0].headers.authorization,
    `Bearer ${LOCAL_PLACEHOLDER_KEY}`,
  );
  openModel("openai/qwen3", { url: "http://localhost:11434/v1", env: {} });
});

Deno.test("openModel() names the env var of a missing key", () => {
  for (
    const [id, o, variable] of [
      ["openai/gpt-4o", { env: {} }, "OPENAI_API_KEY"],
      ["openai/gpt-4o", {
        url: "https://models.example.test/v1",
        env: {},
      }, "OPENAI_API_KEY"],
      ["anthropic/claude-x", { env: {} }, "ANTHROPIC_API_KEY"],
      ["anthropic/claude-x", {
        url: "http://127.0.0.1:9",
        env: { OPENAI_API_KEY: KEY },
      }, "ANTHROPIC_API_KEY"],
    ] as const
  ) {
    const err = assertThrows(
      () => openModel(id, o),
      ModelConfigError,
    ) as ModelConfigError;
    assertEquals(err.variable, variable);
    assertMatch(err.message, new RegExp(`set ${variable}`));
  }
});

Deno.test("openModel() rejects a malformed id, an unknown provider and a bad URL", () => {
  for (const id of ["gpt-4o", "openai/", "/gpt-4o", ""]) {
    assertMatch(
      assertThrows(() => openModel(id, { env: {} }), ModelConfigError)
        .message,
      /is not provider\/model: give --model openai\/MODEL or anthropic\/MODEL/,
    );
  }
  assertMatch(
    assertThrows(
      () => openModel("mistral/large", { env: {} }),
      ModelConfigError,
    )
      .message,
    /Unknown model provider "mistral".*openai\/MODEL or anthropic\/MODEL/,
  );
  assertMatch(
    assertThrows(
      () => openModel("openai/m", { url: "127.0.0.1:8000", apiKey: KEY }),
      ModelConfigError,
    ).message,
    /not an http\(s\) URL: set --model-url or OPENAI_BASE_URL/,
  );
});

Deno.test("openModel() errors and models never show the key", () => {
  const m = openModel("anthropic/claude-x", {
    env: { ANTHROPIC_API_KEY: KEY },
  });
  const texts = [String(m), JSON.stringify(m), Deno.inspect(m)];
  for (const t of texts) assertOk(!t.includes(KEY), t);
  assertEquals(JSON.parse(JSON.stringify(m)), {
    id: "anthropic/claude-x",
    base_url: "https://api.anthropic.com",
  });
});

Deno.test("MODEL_ENV_VARS lists the base URL and key of each provider, and the SDKs' own", () => {
  assertEquals([...MODEL_ENV_VARS].sort(), [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_CUSTOM_HEADERS",
  ]);
});

Deno.test("the models module graph holds no npm package (the SDKs load on first use)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "info",
      "--json",
      new URL("../../lib/models/mod.ts", import.meta.url).pathname,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout));
  const specifiers = (info.modules as { specifier: string }[]).map((m) =>
    m.specifier
  );
  assertOk(specifiers.some((s) => s.endsWith("/lib/models/openai_chat.ts")));
  // Node built-ins (the wire reader's hashing imports node:crypto) are no package.
  assertEquals(
    specifiers.filter((s) => !s.startsWith("file:") && !s.startsWith("node:")),
    [],
  );
});
