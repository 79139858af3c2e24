/**
 * The Gemini wire (`lib/model_gateway/wires/gemini/`) with Google's own
 * client, `@google/genai` (1.30.0, the version Gemini CLI 0.61 bundles), against a scripted Gemini-API server on
 * 127.0.0.1: what the SDK sends is read by the wire's request reader, what
 * the server answers (the model's, or the wire's writer's) is read by the
 * SDK and by the wire's answer readers alike. Whole and streamed answers,
 * thinking, usage, function calls (parallel ones too) and their results
 * linked back, errors, 429 with `retry-after`, a cut stream, the `v1` API
 * version's paths.
 *
 * @module
 */
import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { ApiError, type Content, GoogleGenAI } from "@google/genai";
import { geminiWire } from "../../lib/model_gateway/wires/gemini/mod.ts";
import { SseParser } from "../../lib/model_gateway/sse.ts";
import type {
  NormRequest,
  NormResponse,
  WireReader,
} from "../../lib/model_gateway/wire_types.ts";
import {
  geminiAnswer,
  type GeminiModel,
  type GeminiModelAnswer,
  type GeminiModelRequest,
  startGeminiModel,
} from "./_gemini_model.ts";

const KEY = "AIza-test-key-not-a-real-one";

function client(model: GeminiModel, apiVersion?: string): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: KEY,
    ...(apiVersion ? { apiVersion } : {}),
    httpOptions: { baseUrl: model.url },
  });
}

/** Each request's reader (it reads the answer by the request's place). */
const READERS = new WeakMap<NormRequest, WireReader>();

/** The wire's reading of a request the model received. */
function readRequest(r: GeminiModelRequest): NormRequest {
  const route = geminiWire.match(
    r.method,
    r.path,
    (h) => r.headers[h] ?? null,
  );
  ok(route, `the wire takes ${r.path}`);
  const reader = geminiWire.reader(route);
  const req = reader.request(r.body);
  READERS.set(req, reader);
  return req;
}

/** The wire's reading of an answer's bytes as sent. */
function readAnswer(
  bytes: Uint8Array,
  request: NormRequest,
  stream: boolean,
): { res: NormResponse; complete: boolean } {
  const reader = READERS.get(request)!;
  if (!stream) {
    return {
      res: reader.response(JSON.parse(new TextDecoder().decode(bytes))),
      complete: true,
    };
  }
  const acc = reader.streamReader();
  const p = new SseParser((e, d) => acc.add(e, d));
  p.push(bytes);
  p.end();
  return { res: acc.result(), complete: acc.complete };
}

async function withModel(
  policy: (r: GeminiModelRequest) => GeminiModelAnswer,
  body: (m: GeminiModel) => Promise<void>,
): Promise<void> {
  const m = startGeminiModel(policy);
  try {
    await body(m);
  } finally {
    await m.close();
  }
}

const TOOLS = [{
  functionDeclarations: [
    {
      name: "read_file",
      description: "Read a file",
      parametersJsonSchema: {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
      },
    },
    {
      name: "run_shell_command",
      description: "Run a command",
      parametersJsonSchema: {
        type: "object",
        properties: { command: { type: "string" } },
      },
    },
  ],
}];

Deno.test("gemini wire: a whole answer, read by the SDK and by the wire alike", async () => {
  await withModel(
    () => ({
      json: geminiAnswer({
        text: "Hello there.",
        thought: "The user greets me.",
        usage: {
          promptTokenCount: 120,
          cachedContentTokenCount: 100,
          candidatesTokenCount: 4,
          thoughtsTokenCount: 9,
          totalTokenCount: 133,
        },
      }),
    }),
    async (m) => {
      const res = await client(m).models.generateContent({
        model: "gemini-2.5-flash",
        contents: "Say hello",
        config: {
          systemInstruction: "Be brief.",
          temperature: 0.2,
          tools: TOOLS,
          thinkingConfig: { includeThoughts: true },
        },
      });
      equal(res.text, "Hello there.");
      const [r] = m.requests;
      equal(
        r.path,
        "/v1beta/models/gemini-2.5-flash:generateContent",
      );
      equal(
        r.headers["x-goog-api-key"],
        KEY,
        "the key travels in x-goog-api-key",
      );
      const req = readRequest(r);
      equal(req.wire, "gemini_generate_content");
      equal(req.model, "gemini-2.5-flash");
      equal(req.stream, false);
      deepEqual(req.messages.map((x) => [x.role, x.text]), [[
        "user",
        "Say hello",
      ]]);
      deepEqual(req.tools.map((t) => t.name), [
        "read_file",
        "run_shell_command",
      ]);
      deepEqual(
        req.tools[0].input_schema,
        TOOLS[0].functionDeclarations[0].parametersJsonSchema,
      );
      equal(req.params.temperature, 0.2);
      deepEqual(req.params.thinkingConfig, { includeThoughts: true });
      ok(
        !JSON.stringify(req).includes(KEY),
        "the key is nowhere in what is read",
      );
      const { res: got } = readAnswer(m.answers[0], req, false);
      equal(
        got.text,
        "Hello there.",
        "thought parts are not the answer's text",
      );
      equal(got.stop_reason, "STOP");
      equal(got.model, "gemini-test-model");
      deepEqual(got.usage, {
        input_tokens: 120,
        output_tokens: 13,
        cache_read_input_tokens: 100,
        total_tokens: 133,
        thoughts_tokens: 9,
      });
      equal(res.usageMetadata?.totalTokenCount, got.usage?.total_tokens);
    },
  );
});

Deno.test("gemini wire: a streamed answer: the last chunk's usage is the total, never a sum", async () => {
  const chunks = [
    {
      candidates: [{
        content: {
          role: "model",
          parts: [{ text: "Thinking…", thought: true }],
        },
        index: 0,
      }],
      usageMetadata: {
        promptTokenCount: 50,
        thoughtsTokenCount: 3,
        totalTokenCount: 53,
      },
      modelVersion: "gemini-2.5-pro",
      responseId: "r1",
    },
    {
      candidates: [{
        content: { role: "model", parts: [{ text: "One, " }] },
        index: 0,
      }],
      usageMetadata: {
        promptTokenCount: 50,
        candidatesTokenCount: 2,
        thoughtsTokenCount: 3,
        totalTokenCount: 55,
      },
      modelVersion: "gemini-2.5-pro",
      responseId: "r1",
    },
    {
      candidates: [{
        content: { role: "model", parts: [{ text: "two." }] },
        finishReason: "STOP",
        index: 0,
      }],
      usageMetadata: {
        promptTokenCount: 50,
        candidatesTokenCount: 4,
        thoughtsTokenCount: 3,
        totalTokenCount: 57,
      },
      modelVersion: "gemini-2.5-pro",
      responseId: "r1",
    },
  ];
  await withModel(() => ({ chunks }), async (m) => {
    const stream = await client(m).models.generateContentStream({
      model: "gemini-2.5-pro",
      contents: [{ role: "user", parts: [{ text: "Count to two" }] }],
    });
    let text = "";
    let last = 0;
    for await (const c of stream) {
      text += c.text ?? "";
      last = c.usageMetadata?.totalTokenCount ?? last;
    }
    equal(text, "One, two.");
    const [r] = m.requests;
    equal(r.path, "/v1beta/models/gemini-2.5-pro:streamGenerateContent");
    equal(r.query, "?alt=sse");
    const req = readRequest(r);
    equal(req.stream, true);
    ok(
      new TextDecoder().decode(m.answers[0]).includes("}\r\n\r\ndata: "),
      "events end \\r\\n\\r\\n",
    );
    const { res, complete } = readAnswer(m.answers[0], req, true);
    equal(complete, true);
    equal(res.text, "One, two.");
    equal(res.id, "r1");
    equal(res.model, "gemini-2.5-pro");
    deepEqual(res.usage, {
      input_tokens: 50,
      output_tokens: 7,
      cache_read_input_tokens: null,
      total_tokens: 57,
      thoughts_tokens: 3,
    });
    equal(res.usage?.total_tokens, last, "the SDK's last chunk says the same");
  });
});

Deno.test("gemini wire: parallel function calls without ids, and their results linked back by order and name", async () => {
  let turn = 0;
  await withModel(
    () =>
      turn++ === 0
        ? {
          json: geminiAnswer({
            text: "Let me look.",
            calls: [
              { name: "read_file", args: { path: "a.txt" } },
              { name: "run_shell_command", args: { command: "ls" } },
              { name: "read_file", args: { path: "b.txt" } },
            ],
          }),
        }
        : { json: geminiAnswer({ text: "Done." }) },
    async (m) => {
      const ai = client(m);
      const user: Content = { role: "user", parts: [{ text: "Look around" }] };
      const first = await ai.models.generateContent({
        model: "gemini-2.5-flash",
        contents: [user],
        config: { tools: TOOLS },
      });
      const calls = first.functionCalls ?? [];
      equal(calls.length, 3);
      const req1 = readRequest(m.requests[0]);
      const ans = readAnswer(m.answers[0], req1, false).res;
      deepEqual(ans.tool_calls.map((c) => [c.name, c.arguments]), [
        ["read_file", { path: "a.txt" }],
        ["run_shell_command", { command: "ls" }],
        ["read_file", { path: "b.txt" }],
      ]);
      equal(
        new Set(ans.tool_calls.map((c) => c.id)).size,
        3,
        "each call its own id",
      );
      ok(
        ans.tool_calls.every((c) => c.id.startsWith("gc_1_")),
        "made from the answer's place",
      );
      // As Gemini CLI answers: each response with an id of its own making,
      // the shell's first (a different order than the calls').
      const model = first.candidates![0].content!;
      const own = (n: string, i: number) =>
        `${n}_${1_700_000_000_000 + i}_${i}`;
      await ai.models.generateContent({
        model: "gemini-2.5-flash",
        contents: [user, model, {
          role: "user",
          parts: [
            {
              functionResponse: {
                id: own("run_shell_command", 1),
                name: "run_shell_command",
                response: { output: "a.txt b.txt" },
              },
            },
            {
              functionResponse: {
                id: own("read_file", 0),
                name: "read_file",
                response: { output: "alpha" },
              },
            },
            {
              functionResponse: {
                id: own("read_file", 2),
                name: "read_file",
                response: { error: "File not found: b.txt" },
              },
            },
          ],
        }],
        config: { tools: TOOLS },
      });
      const req2 = readRequest(m.requests[1]);
      const history = req2.messages[1];
      equal(history.role, "assistant");
      deepEqual(
        history.tool_calls.map((c) => c.id),
        ans.tool_calls.map((c) => c.id),
        "the calls sent back have the answer's ids",
      );
      equal(history.text.replace(/\s+/g, ""), ans.text.replace(/\s+/g, ""));
      deepEqual(req2.messages[2].tool_results, [
        { id: ans.tool_calls[1].id, text: "a.txt b.txt", is_error: false },
        { id: ans.tool_calls[0].id, text: "alpha", is_error: false },
        {
          id: ans.tool_calls[2].id,
          text: "File not found: b.txt",
          is_error: true,
        },
      ]);
    },
  );
});

Deno.test("gemini wire: ids a client writes into the calls it sends back (Gemini CLI) or the API gave change nothing", async () => {
  let turn = 0;
  await withModel(
    () =>
      turn++ === 0
        ? {
          json: geminiAnswer({
            text: "Reading.",
            calls: [
              { name: "read_file", args: { file_path: "x" } },
              { id: "api-7", name: "read_file", args: { file_path: "y" } },
            ],
          }),
        }
        : { json: geminiAnswer({ text: "ok" }) },
    async (m) => {
      const ai = client(m);
      const user: Content = { role: "user", parts: [{ text: "read x and y" }] };
      const first = await ai.models.generateContent({
        model: "m",
        contents: [user],
      });
      equal(first.functionCalls?.[1].id, "api-7");
      const ans = readAnswer(m.answers[0], readRequest(m.requests[0]), false)
        .res;
      // Gemini CLI 0.61 sends the model's turn back with an id of its own
      // in each call that had none, and a thought signature beside it.
      const model = structuredClone(first.candidates![0].content!);
      model.parts![1] = {
        functionCall: {
          ...model.parts![1].functionCall,
          id: "read_file_1795_0",
        },
        thoughtSignature: "skip_thought_signature_validator",
      };
      await ai.models.generateContent({
        model: "m",
        contents: [user, model, {
          role: "user",
          parts: [
            {
              functionResponse: {
                id: "api-7",
                name: "read_file",
                response: { output: "yy" },
              },
            },
            {
              functionResponse: {
                id: "read_file_1795_0",
                name: "read_file",
                response: { output: "xx" },
              },
            },
          ],
        }],
      });
      const req2 = readRequest(m.requests[1]);
      deepEqual(
        req2.messages[1].tool_calls.map((c) => c.id),
        ans.tool_calls.map((c) => c.id),
        "the same ids as the answer's",
      );
      deepEqual(req2.messages[2].tool_results.map((r) => [r.id, r.text]), [
        [ans.tool_calls[1].id, "yy"],
        [ans.tool_calls[0].id, "xx"],
      ], "each response to the call whose id it names");
    },
  );
});

Deno.test("gemini wire: the writer's answers, whole and streamed, as the SDK and the reader read them", async () => {
  const own = (stream: boolean) =>
    geminiWire.writer.answer({
      text: "",
      calls: [
        { name: "read_file", arguments: { path: "notes.txt" } },
        { name: "run_shell_command", arguments: { command: "echo hi" } },
      ],
      model: "gemini-2.5-flash",
    }, { stream, usage: false });
  await withModel(
    (r) => {
      const a = own(r.api === "streamGenerateContent");
      const text = new TextDecoder().decode(a.body);
      return r.api === "streamGenerateContent"
        ? { chunks: [JSON.parse(text.replace(/^data: /, ""))] }
        : { json: JSON.parse(text) };
    },
    async (m) => {
      const ai = client(m);
      const whole = await ai.models.generateContent({
        model: "gemini-2.5-flash",
        contents: "go",
      });
      const calls = whole.functionCalls ?? [];
      deepEqual(calls.map((c) => [c.name, c.args]), [
        ["read_file", { path: "notes.txt" }],
        ["run_shell_command", { command: "echo hi" }],
      ]);
      ok(
        calls.every((c) =>
          typeof c.id === "string" && c.id.startsWith("harness_")
        ),
      );
      const req = readRequest(m.requests[0]);
      const back = readAnswer(m.answers[0], req, false).res;
      deepEqual(back.tool_calls.map((c) => c.name), calls.map((c) => c.name));
      ok(back.tool_calls.every((c) => c.id.startsWith("gc_1_")));
      const seen: string[] = [];
      for await (
        const c of await ai.models.generateContentStream({
          model: "gemini-2.5-flash",
          contents: "go",
        })
      ) {
        for (const f of c.functionCalls ?? []) seen.push(f.name!);
      }
      deepEqual(seen, ["read_file", "run_shell_command"]);
      const written = own(true);
      equal(written.contentType, "text/event-stream");
      ok(new TextDecoder().decode(written.body).endsWith("\r\n\r\n"));
      const { complete } = readAnswer(
        written.body,
        readRequest(m.requests[1]),
        true,
      );
      equal(complete, true);
    },
  );
});

Deno.test("gemini wire: narrowed tools and a refusal asked again are requests the reader reads back", () => {
  const body = {
    contents: [{ role: "user", parts: [{ text: "refund order 7" }] }],
    tools: TOOLS,
  };
  const narrowed = geminiWire.writer.withTools(body, {
    hidden: ["run_shell_command"],
    schemas: {
      read_file: { type: "object", properties: { path: { enum: ["a.txt"] } } },
    },
  });
  const route = geminiWire.match(
    "POST",
    "/v1beta/models/m:generateContent",
    () => null,
  )!;
  const reader = geminiWire.reader(route);
  const read = reader.request(narrowed);
  deepEqual(read.tools.map((t) => t.name), ["read_file"]);
  deepEqual(read.tools[0].input_schema, {
    type: "object",
    properties: { path: { enum: ["a.txt"] } },
  });
  const answer = reader.response(
    geminiAnswer({ calls: [{ name: "read_file", args: { path: "b.txt" } }] }),
  );
  const again = geminiWire.writer.withRefusals(narrowed, answer, [{
    id: answer.tool_calls[0].id,
    tool: "read_file",
    reason: "path b.txt is not one the conversation showed",
  }]);
  const reread = geminiWire.reader(route).request(again);
  equal(reread.messages.length, 3);
  equal(
    reread.messages[1].tool_calls[0].id,
    answer.tool_calls[0].id,
    "the refused call keeps its id",
  );
  equal(reread.messages[2].tool_results[0].id, answer.tool_calls[0].id);
  equal(reread.messages[2].tool_results[0].is_error, true);
  ok(reread.messages[2].tool_results[0].text.startsWith("Refused: path b.txt"));
});

Deno.test("gemini wire: errors in Google's shape, the upstream's and the gateway's own", async () => {
  await withModel(
    (r) =>
      r.model === "busy"
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
        : r.model === "gw"
        ? {
          status: 504,
          json: JSON.parse(
            geminiWire.error(
              504,
              "The upstream did not answer within 600000 ms",
            ).body,
          ),
        }
        : {
          status: 400,
          json: {
            error: {
              code: 400,
              message: "API key not valid. Please pass a valid API key.",
              status: "INVALID_ARGUMENT",
            },
          },
        },
    async (m) => {
      const ai = client(m);
      await rejects(
        ai.models.generateContent({ model: "bad", contents: "x" }),
        (e) => {
          ok(e instanceof ApiError);
          equal(e.status, 400);
          return true;
        },
      );
      deepEqual(
        geminiWire.errorOf(
          JSON.parse(new TextDecoder().decode(m.answers[0])),
          400,
        ),
        {
          type: "INVALID_ARGUMENT",
          message: "API key not valid. Please pass a valid API key.",
        },
      );
      await rejects(
        ai.models.generateContent({ model: "busy", contents: "x" }),
        (e) => {
          ok(e instanceof ApiError);
          equal(e.status, 429);
          return true;
        },
      );
      const direct = await fetch(
        `${m.url}/v1beta/models/busy:generateContent`,
        {
          method: "POST",
          body: JSON.stringify({ contents: [] }),
        },
      );
      equal(direct.headers.get("retry-after"), "7");
      equal(
        geminiWire.errorOf(await direct.json(), 429).type,
        "RESOURCE_EXHAUSTED",
      );
      await rejects(
        ai.models.generateContent({ model: "gw", contents: "x" }),
        (e) => {
          ok(e instanceof ApiError);
          equal(e.status, 504);
          ok(e.message.includes("did not answer within"), e.message);
          return true;
        },
      );
      const own = geminiWire.error(502, "unreachable");
      equal(own.status, 502);
      equal(JSON.parse(own.body).error.status, "UNAVAILABLE");
    },
  );
});

Deno.test("gemini wire: a stream cut before its finishing chunk is incomplete", async () => {
  const chunk = (text: string, finish?: string) => ({
    candidates: [{
      content: { role: "model", parts: [{ text }] },
      ...(finish ? { finishReason: finish } : {}),
      index: 0,
    }],
    usageMetadata: {
      promptTokenCount: 5,
      candidatesTokenCount: 1,
      totalTokenCount: 6,
    },
  });
  await withModel(
    () => ({
      chunks: [chunk("Partial "), chunk("answer"), chunk(".", "STOP")],
      cutAfter: 2,
    }),
    async (m) => {
      const got: string[] = [];
      await rejects(async () => {
        for await (
          const c of await client(m).models.generateContentStream({
            model: "m",
            contents: "x",
          })
        ) got.push(c.text ?? "");
      });
      deepEqual(got, ["Partial ", "answer"]);
      const { res, complete } = readAnswer(
        m.answers[0],
        readRequest(m.requests[0]),
        true,
      );
      equal(complete, false, "no finishReason arrived");
      equal(res.text, "Partial answer");
      equal(res.stop_reason, null);
    },
  );
});

Deno.test("gemini wire: paths: v1beta and v1 recorded, countTokens and the rest forwarded, the other wires' /v1/ left alone", async () => {
  await withModel(() => ({ json: geminiAnswer({ text: "v1" }) }), async (m) => {
    // The v1 paths (@google/genai 3.x's default; Gemini CLI's with
    // GOOGLE_GENAI_API_VERSION=v1).
    const ai = client(m, "v1");
    equal(
      (await ai.models.generateContent({
        model: "gemini-2.5-flash",
        contents: "x",
      })).text,
      "v1",
    );
    equal(
      m.requests[0].path,
      "/v1/models/gemini-2.5-flash:generateContent",
    );
    ok(readRequest(m.requests[0]).model === "gemini-2.5-flash");
    const counted = await client(m).models.countTokens({
      model: "gemini-2.5-flash",
      contents: "hello",
    });
    ok(typeof counted.totalTokens === "number");
    const r = m.requests[1];
    equal(r.path, "/v1beta/models/gemini-2.5-flash:countTokens");
    const route = geminiWire.match(
      r.method,
      r.path,
      (h) => r.headers[h] ?? null,
    )!;
    equal(route.recorded, false, "countTokens is forwarded, not recorded");
  });
  const none = () => null;
  equal(geminiWire.match("POST", "/v1/chat/completions", none), null);
  equal(geminiWire.match("POST", "/v1/messages", none), null);
  equal(geminiWire.match("GET", "/v1/models", none), null);
  equal(
    geminiWire.match(
      "GET",
      "/v1/models",
      (h) => h === "x-goog-api-key" ? "k" : null,
    )?.recorded,
    false,
  );
  equal(geminiWire.match("GET", "/v1beta/models", none)?.recorded, false);
  equal(
    geminiWire.match("POST", "/v1beta/tunedModels/t1:generateContent", none)
      ?.model,
    "tunedModels/t1",
  );
  equal(
    geminiWire.upstream.default,
    "https://generativelanguage.googleapis.com",
  );
  equal(geminiWire.upstream.strip, "", "the path goes to the upstream as sent");
});
