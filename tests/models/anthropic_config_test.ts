import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import { AnthropicMessagesModel } from "../../lib/models/anthropic_messages.ts";
import {
  ModelApiError,
  ModelConfigError,
  ModelResponseError,
} from "../../lib/models/binding_errors.ts";
import type { ChatRequest } from "../../lib/models/chat_types.ts";
import {
  anthropicError,
  message,
  startAnthropicServer,
} from "./_anthropic_server.ts";

const KEY = "sk-ant-test-OKAPI-91b2c3d4-do-not-leak";

function model(
  baseUrl: string,
  o: { maxRetries?: number } = {},
): AnthropicMessagesModel {
  return new AnthropicMessagesModel("claude-test-1", {
    baseUrl,
    apiKey: KEY,
    ...o,
  });
}

const HELLO: ChatRequest = {
  messages: [{ role: "user", content: "Hello" }],
};

Deno.test("AnthropicMessagesModel never shows its key", async () => {
  await using s = startAnthropicServer([
    anthropicError(401, "authentication_error", `invalid x-api-key ${KEY}`),
    { json: { echo: KEY } },
  ]);
  const m = model(s.baseUrl, { maxRetries: 0 });
  const e1 = await assertRejects(() => m.complete(HELLO), ModelApiError);
  const e2 = await assertRejects(() => m.complete(HELLO), ModelResponseError);
  assertMatch(e1.message, /401.*check the API key/);
  const texts = [
    String(m),
    JSON.stringify(m),
    Deno.inspect(m, { depth: 10, showHidden: true }),
    ...[e1, e2].flatMap((e) => [
      String(e),
      JSON.stringify(e),
      Deno.inspect(e, { depth: 10, showHidden: true }),
    ]),
  ];
  for (const t of texts) assertOk(!t.includes(KEY), `key leaked in: ${t}`);
});

Deno.test("AnthropicMessagesModel refuses to start without a key", () => {
  let err: unknown = null;
  try {
    new AnthropicMessagesModel("claude-x", { baseUrl: "http://127.0.0.1:1" });
  } catch (e) {
    err = e;
  }
  assertOk(err instanceof ModelConfigError);
  assertEquals(err.variable, "ANTHROPIC_API_KEY");
});

Deno.test({
  name:
    "AnthropicMessagesModel.complete() says which variable to grant when the SDK may not read its environment",
  permissions: { net: ["127.0.0.1"], env: false, read: true },
  async fn() {
    await using s = startAnthropicServer([
      message({ content: [{ type: "text", text: "ok" }] }),
    ]);
    const err = await assertRejects(
      () => model(s.baseUrl).complete(HELLO),
      ModelConfigError,
    );
    assertMatch(err.message, /ANTHROPIC_CUSTOM_HEADERS/);
    assertMatch(err.message, /--allow-env=/);
    assertEquals(s.requests.length, 0);
  },
});
