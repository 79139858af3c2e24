/**
 * Issue 44, items 9 and 13, through the real server: keys of Groq, xAI,
 * Perplexity, Replicate, Azure and Mistral pasted into a user's prompt or
 * echoed in an event are not stored; ordinary words after "Basic" and
 * "Bearer" are (the title "Basic scripted session" a model gave OpenCode,
 * recorded by the model gateway).
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { annotation } from "../../lib/trace/episode_events.ts";
import OpenAI from "openai";
import { fixedContext } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { startUpstreams } from "../model_gateway/_upstreams.ts";
import { LABELLED_KEYS, PROVIDER_KEYS } from "../trace/_key_shapes.ts";

const WORDS = [
  "Use Basic authentication for the admin page",
  "Bearer tokens expire after an hour",
];

Deno.test("through the server: provider keys in a prompt and in an ingested event are not stored, ordinary words after Basic and Bearer are", async () => {
  await using srv = await startServer();
  const keys = [
    ...PROVIDER_KEYS.map(([k]) => k),
    ...LABELLED_KEYS.map(([, k]) => k),
  ];
  const prompt = [
    "Here are my keys, please set up the client:",
    ...PROVIDER_KEYS.map(([k]) => `- ${k}`),
    ...LABELLED_KEYS.map(([t]) => `- ${t}`),
    ...WORDS,
  ].join("\n");
  const hook = await fetch(`${srv.url}/hook/host_a?cap=cap_keys`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      session_id: "sess-keys",
      hook_event_name: "UserPromptSubmit",
      prompt,
    }),
  });
  assertEquals(hook.status, 204);
  // An upstream's error echoing the key, as a recorder would send it.
  const echoed = annotation(fixedContext("cap_keys"), {
    type: "upstream.error",
    message: `401 Invalid API Key: ${PROVIDER_KEYS[0][0]}`,
  });
  const ing = await fetch(`${srv.url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(echoed),
  });
  assertEquals(ing.status, 200);
  await ing.body?.cancel();
  const spool = Deno.readTextFileSync(srv.store.spoolPath("cap_keys"));
  const stored = keys.filter((k) => spool.includes(k));
  assertEquals(stored, [], "keys stored verbatim");
  for (const w of WORDS) assertOk(spool.includes(w), `"${w}" was altered`);
  for (
    const [, name] of [
      ...PROVIDER_KEYS,
      ...LABELLED_KEYS.map((x) => [x[0], x[2]]),
    ]
  ) {
    assertOk(spool.includes(`[REDACTED:${name}]`), name);
  }
});

Deno.test("through the server: a title OpenCode asks the model for, 'Basic scripted session', is recorded as the model answered it", async () => {
  await using up = startUpstreams();
  await using srv = await startServer({
    modelGateway: {
      upstreamOpenai: up.openaiBase,
      upstreamAnthropic: up.anthropicBase,
    },
  });
  up.push({ text: "Basic scripted session" });
  const client = new OpenAI({
    baseURL: `${srv.url}/v1`,
    apiKey: "title-test-key-0000",
    maxRetries: 0,
    defaultHeaders: { "x-harness-capture": "c_title" },
  });
  const answer = await client.chat.completions.create({
    model: "m",
    messages: [
      { role: "system", content: "Generate a title for this conversation." },
      { role: "user", content: "run the scripted basic session" },
    ],
  });
  assertEquals(answer.choices[0].message.content, "Basic scripted session");
  await srv.server.modelGateway?.settled();
  const spool = Deno.readTextFileSync(srv.store.spoolPath("c_title"));
  assertOk(spool.includes("Basic scripted session"), "the title was altered");
  assertEquals(spool.includes("REDACTED:basic_auth"), false);
});
