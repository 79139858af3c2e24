/**
 * The one error map (`errorAnswer`, `lib/ingest/error_answer.ts`) on who may call and when,
 * pinned through the real server on 127.0.0.1: a request from a web page
 * (403), one without the token (401 with WWW-Authenticate), one past
 * `maxInFlight` (503 with Retry-After) — each in its route family's shape.
 */
import {
  chatBody,
  event,
  hookBody,
  JSON_TYPE,
  messagesBody,
  otlpBody,
  run,
} from "./_error_map.ts";

Deno.test("errorAnswer(): a request from a web page is 403 on every family, in its shape", async () => {
  const origin = { ...JSON_TYPE, origin: "https://evil.example" };
  await run([
    {
      what: "origin",
      path: "/ingest",
      headers: origin,
      status: 403,
      shape: "control",
      message: /Origin/,
    },
    {
      what: "origin",
      path: "/hook/host_b",
      headers: origin,
      status: 403,
      shape: "control",
    },
    {
      what: "origin",
      path: "/v1/traces",
      headers: origin,
      status: 403,
      shape: "otlp",
      code: 7,
    },
    {
      what: "origin",
      method: "GET",
      path: "/health",
      headers: origin,
      status: 403,
      shape: "control",
    },
    {
      what: "origin",
      path: "/v1/chat/completions",
      headers: origin,
      body: chatBody,
      status: 403,
      shape: "openai",
    },
    {
      what: "origin",
      path: "/v1/messages",
      headers: origin,
      body: messagesBody,
      status: 403,
      shape: "anthropic",
    },
  ]);
});

Deno.test("errorAnswer(): a missing token is 401 with WWW-Authenticate on every family, in its shape", async () => {
  const challenge = { "www-authenticate": "Bearer" };
  await run([
    {
      what: "token",
      path: "/ingest",
      status: 401,
      shape: "control",
      answerHeaders: challenge,
      message: /Authorization: Bearer/,
    },
    {
      what: "token",
      path: "/hook/host_b",
      status: 401,
      shape: "control",
      answerHeaders: challenge,
    },
    {
      what: "token",
      path: "/v1/traces",
      status: 401,
      shape: "otlp",
      code: 16,
      answerHeaders: challenge,
    },
    {
      what: "token",
      method: "GET",
      path: "/captures",
      status: 401,
      shape: "control",
      answerHeaders: challenge,
    },
    {
      what: "token",
      method: "GET",
      path: "/nope",
      status: 401,
      shape: "control",
    },
    {
      what: "token",
      path: "/v1/chat/completions",
      body: chatBody,
      status: 401,
      shape: "openai",
      answerHeaders: challenge,
      message: /x-harness-token/,
    },
    {
      what: "token",
      path: "/v1/messages",
      headers: { ...JSON_TYPE, "anthropic-version": "2023-06-01" },
      body: messagesBody,
      status: 401,
      shape: "anthropic",
      message: /x-harness-token/,
    },
    {
      what: "token",
      method: "GET",
      path: "/v1/models",
      status: 401,
      shape: "openai",
    },
  ], { token: "tok-1" });
});

Deno.test("errorAnswer(): past maxInFlight every family answers 503 with Retry-After, in its shape", async () => {
  const retry = { "retry-after": "1" };
  await run([
    {
      what: "busy",
      path: "/ingest",
      body: event("c"),
      status: 503,
      shape: "control",
      answerHeaders: retry,
      message: /busy/,
    },
    {
      what: "busy",
      path: "/hook/host_b",
      body: hookBody,
      status: 503,
      shape: "control",
      answerHeaders: retry,
    },
    {
      what: "busy",
      path: "/v1/traces",
      body: otlpBody,
      status: 503,
      shape: "otlp",
      code: 14,
      answerHeaders: retry,
    },
    {
      what: "busy",
      method: "GET",
      path: "/health",
      status: 503,
      shape: "control",
      answerHeaders: retry,
    },
    {
      what: "busy",
      path: "/v1/chat/completions",
      body: chatBody,
      status: 503,
      shape: "openai",
      answerHeaders: retry,
    },
    {
      what: "busy",
      path: "/v1/messages",
      body: messagesBody,
      status: 503,
      shape: "anthropic",
      answerHeaders: retry,
    },
  ], { maxInFlight: 0 });
});
