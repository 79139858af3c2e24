/**
 * The Gemini API through the real server: Google's own client,
 * `@google/genai` (1.30.0, the version Gemini CLI 0.61 bundles), aimed at
 * the ingest server (its base URL), which forwards to a scripted Gemini-API
 * upstream on 127.0.0.1 (`serve --upstream-gemini`). The client gets the
 * upstream's answers byte for byte (whole, streamed, errors, 429 with
 * `retry-after`, a cut stream cut for it too); every exchange is recorded
 * once (`model.requested`/`model.responded`, the calls started and their
 * results linked by order and name, the tools offered), its tokens the
 * answer's `usageMetadata` (the last chunk's: never a sum); the key
 * (`x-goog-api-key`, or `?key=`) is nowhere in the store.
 *
 * @module
 */
import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { ApiError, type Content, GoogleGenAI } from "@google/genai";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { type RunningServer, startServer } from "../_server.ts";
import { writeActiveCapture } from "../../lib/store/active_capture.ts";
import { filesContaining, recordedEvents } from "./_gateway.ts";
import {
  geminiAnswer,
  type GeminiModel,
  type GeminiModelAnswer,
  type GeminiModelRequest,
  startGeminiModel,
} from "./_gemini_model.ts";

const KEY = "AIza-gwtest-QUAGGA-9c1d";
const CAPTURE = "cap_gemini";

interface Rig {
  /** fetch without the tap. */
  fetch: typeof fetch;
  model: GeminiModel;
  server: RunningServer;
  ai: GoogleGenAI;
  /** What the client received, whole answers and stream bytes, in order. */
  got: Uint8Array[];
  events(): Promise<TraceEvent[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function rig(
  policy: (r: GeminiModelRequest) => GeminiModelAnswer,
): Promise<Rig> {
  const model = startGeminiModel(policy);
  const server = await startServer({
    modelGateway: { upstreams: { gemini: model.url } },
  });
  // Recorded into the active capture, as an unmodified client records.
  writeActiveCapture(server.root, CAPTURE);
  const got: Uint8Array[] = [];
  const real = globalThis.fetch;
  // The client's fetch, keeping what it received byte for byte.
  const tap: typeof fetch = async (input, init) => {
    const res = await real(input, init);
    const bytes = new Uint8Array(await res.arrayBuffer());
    got.push(bytes);
    return new Response(bytes, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
  const ai = new GoogleGenAI({
    apiKey: KEY,
    httpOptions: { baseUrl: server.url },
  });
  // @google/genai takes no fetch option: its calls go through
  // globalThis.fetch (the gateway's own to the upstream pass untouched).
  globalThis.fetch =
    ((input: RequestInfo | URL, init?: RequestInit) =>
      String(input instanceof Request ? input.url : input).startsWith(
          server.url,
        )
        ? tap(input, init)
        : real(input, init)) as typeof fetch;
  return {
    fetch: real,
    model,
    server,
    ai,
    got,
    events: () => recordedEvents(server, CAPTURE),
    async [Symbol.asyncDispose]() {
      globalThis.fetch = real;
      await server[Symbol.asyncDispose]();
      await model.close();
    },
  };
}

const ofKind = (evs: TraceEvent[], kind: string) =>
  evs.filter((e) => e.kind === kind);

const TOOLS = [{
  functionDeclarations: [
    {
      name: "read_file",
      description: "Read a file",
      parametersJsonSchema: {
        type: "object",
        properties: { path: { type: "string" } },
      },
    },
    {
      name: "list_dir",
      description: "List a folder",
      parametersJsonSchema: {
        type: "object",
        properties: { dir: { type: "string" } },
      },
    },
  ],
}];

Deno.test("gemini through the gateway: whole and streamed answers byte for byte, parallel calls linked, each exchange recorded once, tokens = usageMetadata", async () => {
  let turn = 0;
  const usage: Record<string, number>[] = [
    {
      promptTokenCount: 40,
      candidatesTokenCount: 9,
      thoughtsTokenCount: 5,
      totalTokenCount: 54,
    },
    {
      promptTokenCount: 90,
      cachedContentTokenCount: 40,
      candidatesTokenCount: 6,
      totalTokenCount: 96,
    },
  ];
  await using r = await rig((req) => {
    const t = turn++;
    if (t === 0) {
      return {
        json: geminiAnswer({
          text: "Looking.",
          thought: "Two lookups at once.",
          calls: [
            { name: "read_file", args: { path: "a.txt" } },
            { name: "list_dir", args: { dir: "." } },
          ],
          usage: usage[0],
        }),
      };
    }
    // Streamed: a thought, two pieces, running totals.
    ok(req.api === "streamGenerateContent");
    const piece = (text: string, total: number, last: boolean) => ({
      candidates: [{
        content: { role: "model", parts: [{ text }] },
        ...(last ? { finishReason: "STOP" } : {}),
        index: 0,
      }],
      usageMetadata: {
        ...usage[1],
        candidatesTokenCount: total,
        totalTokenCount: 90 + total,
      },
      modelVersion: "gemini-test-model",
      responseId: "resp_stream",
    });
    return {
      chunks: [piece("a.txt says ", 3, false), piece("hello.", 6, true)],
    };
  });
  const user: Content = { role: "user", parts: [{ text: "Look around" }] };
  const first = await r.ai.models.generateContent({
    model: "gemini-2.5-flash",
    contents: [user],
    config: { tools: TOOLS, systemInstruction: "Be brief." },
  });
  equal(first.functionCalls?.length, 2);
  // As Gemini CLI answers: its own ids in the calls sent back and in the
  // responses, the second call's response first.
  const model = structuredClone(first.candidates![0].content!);
  let k = 0;
  model.parts = model.parts!.map((p) =>
    p.functionCall
      ? { ...p, functionCall: { ...p.functionCall, id: `cli_${++k}` } }
      : p
  );
  let text = "";
  for await (
    const c of await r.ai.models.generateContentStream({
      model: "gemini-2.5-flash",
      contents: [user, model, {
        role: "user",
        parts: [
          {
            functionResponse: {
              id: "cli_2",
              name: "list_dir",
              response: { output: "a.txt" },
            },
          },
          {
            functionResponse: {
              id: "cli_1",
              name: "read_file",
              response: { output: "hello" },
            },
          },
        ],
      }],
      config: { tools: TOOLS },
    })
  ) text += c.text ?? "";
  equal(text, "a.txt says hello.");
  // Byte for byte: what the client got is what the upstream sent.
  deepEqual(
    r.got.map((b) => new TextDecoder().decode(b)),
    r.model.answers.map((b) => new TextDecoder().decode(b)),
  );
  equal(
    r.model.requests[0].headers["x-goog-api-key"],
    KEY,
    "the key went upstream",
  );
  const evs = await r.events();
  const req = ofKind(evs, "model.requested");
  const res = ofKind(evs, "model.responded");
  equal(req.length, 2, "each exchange once");
  equal(res.length, 2);
  equal(
    new Set(evs.map((e) => e.episode_id)).size,
    1,
    "one conversation, one episode",
  );
  const p0 = req[0].payload as {
    request: { wire: string; model: string; stream: boolean; tools: string[] };
  };
  deepEqual([p0.request.wire, p0.request.model, p0.request.stream], [
    "gemini_generate_content",
    "gemini-2.5-flash",
    false,
  ]);
  deepEqual(p0.request.tools, ["read_file", "list_dir"]);
  equal(
    (req[1].payload as { request: { stream: boolean } }).request.stream,
    true,
  );
  const tokens = res.map((e) =>
    (e.payload as { response: { usage: Record<string, number | null> } })
      .response.usage
  );
  deepEqual(tokens[0], {
    input_tokens: 40,
    output_tokens: 14,
    cache_read_input_tokens: null,
    total_tokens: 54,
    thoughts_tokens: 5,
  });
  deepEqual(tokens[1], {
    input_tokens: 90,
    output_tokens: 6,
    cache_read_input_tokens: 40,
    total_tokens: 96,
    thoughts_tokens: null,
  }, "the last chunk's, not a sum");
  const started = ofKind(evs, "tool.call.started");
  const done = ofKind(evs, "tool.call.completed");
  deepEqual(
    started.map((e) =>
      (e.payload as { tool: { host_name: string } }).tool.host_name
    ),
    ["read_file", "list_dir"],
  );
  deepEqual(
    done.map((
      e,
    ) => [e.parent_event_id, (e.payload as { result: unknown }).result]),
    [[started[1].event_id, "a.txt"], [started[0].event_id, "hello"]],
    "each result to its call, by the id it named",
  );
  equal(ofKind(evs, "toolset.exposed").length, 1);
  r.server.store.flush();
  deepEqual(
    await filesContaining(r.server.root, KEY),
    [],
    "the key is in no file",
  );
});

Deno.test("gemini through the gateway: errors as the upstream sent them (429 with retry-after), a cut stream cut for the client too", async () => {
  await using r = await rig((req) =>
    req.model === "busy"
      ? {
        status: 429,
        headers: { "retry-after": "7" },
        json: {
          error: {
            code: 429,
            message: "Resource has been exhausted (e.g. check quota).",
            status: "RESOURCE_EXHAUSTED",
          },
        },
      }
      : {
        chunks: [
          geminiAnswer({ text: "Partial " }),
          geminiAnswer({ text: "answer." }),
        ].map((c) => ({
          ...c,
          candidates: [{
            ...(c.candidates as object[])[0],
            finishReason: undefined,
          }],
        })),
        cutAfter: 1,
      }
  );
  await rejects(
    r.ai.models.generateContent({ model: "busy", contents: "x" }),
    (e) => {
      ok(e instanceof ApiError);
      equal(e.status, 429);
      return true;
    },
  );
  const direct = await r.fetch(
    `${r.server.url}/v1beta/models/busy:generateContent`,
    {
      method: "POST",
      headers: {
        "x-goog-api-key": KEY,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "x" }] }],
      }),
    },
  );
  equal(direct.status, 429);
  equal(direct.headers.get("retry-after"), "7");
  deepEqual((await direct.json()).error.status, "RESOURCE_EXHAUSTED");
  // A stream the upstream cuts: the client gets what came, then the cut
  // (no end: it never sees a complete wrong answer).
  await rejects(async () => {
    for await (
      const _ of await r.ai.models.generateContentStream({
        model: "cut",
        contents: "x",
      })
    ) { /* read to the end */ }
  });
  const raw = await r.fetch(
    `${r.server.url}/v1beta/models/cut:streamGenerateContent?alt=sse`,
    {
      method: "POST",
      headers: { "x-goog-api-key": KEY },
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "y" }] }],
      }),
    },
  );
  const pieces: string[] = [];
  const dec = new TextDecoder();
  await rejects(async () => {
    for await (const c of raw.body!) pieces.push(dec.decode(c));
  });
  ok(pieces.join("").includes('"Partial "'), "what came before the cut came");
  const evs = await r.events();
  const res = ofKind(evs, "model.responded").map((e) =>
    e.payload as {
      status: number;
      error?: { type: string };
      incomplete?: boolean;
    }
  );
  deepEqual(
    res.map((p) => [p.status, p.error?.type ?? null, p.incomplete ?? false]),
    [
      [429, "RESOURCE_EXHAUSTED", false],
      [429, "RESOURCE_EXHAUSTED", false],
      [200, "stream", true],
      [200, "stream", true],
    ],
    "Google's error status recorded; the cut streams incomplete",
  );
  r.server.store.flush();
  deepEqual(
    await filesContaining(r.server.root, KEY),
    [],
    "the key is in no file",
  );
});

Deno.test("gemini through the gateway: v1 paths recorded, countTokens forwarded and not recorded, the upstream on /health", async () => {
  await using r = await rig(() => ({ json: geminiAnswer({ text: "ok" }) }));
  const v1 = new GoogleGenAI({
    apiKey: KEY,
    apiVersion: "v1",
    httpOptions: {
      baseUrl: r.server.url,
    },
  });
  equal(
    (await v1.models.generateContent({
      model: "gemini-2.5-flash",
      contents: "hi",
    })).text,
    "ok",
  );
  const counted = await r.ai.models.countTokens({
    model: "gemini-2.5-flash",
    contents: "hello",
  });
  ok(typeof counted.totalTokens === "number");
  deepEqual(r.model.requests.map((q) => q.path), [
    "/v1/models/gemini-2.5-flash:generateContent",
    "/v1beta/models/gemini-2.5-flash:countTokens",
  ]);
  const evs = await r.events();
  equal(ofKind(evs, "model.requested").length, 1);
  const health = await (await fetch(`${r.server.url}/health`)).json();
  equal(health.model_gateway.upstreams.gemini, r.model.url);
});

Deno.test("gemini through the gateway: an upstream that does not answer is the gateway's 502 in Google's shape, the key (?key=) in no answer and no file", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closed = `http://127.0.0.1:${(l.addr as Deno.NetAddr).port}`;
  l.close();
  await using server = await startServer({
    modelGateway: { upstreams: { gemini: closed } },
  });
  writeActiveCapture(server.root, CAPTURE);
  const res = await fetch(
    `${server.url}/v1beta/models/m:generateContent?key=${KEY}`,
    {
      method: "POST",
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "hi" }] }],
      }),
    },
  );
  const text = await res.text();
  equal(res.status, 502);
  const body = JSON.parse(text);
  equal(body.error.code, 502);
  equal(body.error.status, "UNAVAILABLE");
  ok(body.error.message.includes("--upstream-gemini"), body.error.message);
  equal(text.includes(KEY), false, "the key is not in the answer");
  const evs = await recordedEvents(server, CAPTURE);
  deepEqual(
    ofKind(evs, "model.responded").map((e) => [
      (e.payload as { status: number }).status,
      (e.payload as { error?: { type: string } }).error?.type,
    ]),
    [[502, "UNAVAILABLE"]],
  );
  server.store.flush();
  deepEqual(
    await filesContaining(server.root, KEY),
    [],
    "the key is in no file",
  );
});
