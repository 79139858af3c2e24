/**
 * A compiled package served on the Gemini wire (`serve --package`), as on
 * the others: the τ² retail agent-form package answers the lookups due now
 * itself, and Google's `@google/genai` client takes each answer for a
 * normal function call — whole and streamed — with `x-harness-served:
 * package`, zero usage and no request to the upstream; the client sends
 * the result back as a `functionResponse` and the package serves the next
 * lookup from it. A request the package does not fit goes upstream
 * untouched.
 *
 * @module
 */
import { deepEqual, equal } from "node:assert/strict";
import { GoogleGenAI } from "@google/genai";
import { GatewayDriver } from "../../lib/forms/agent/gateway_driver.ts";
import { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { RETAIL_TOOL_SCHEMAS } from "../../eval/envs/tau2/mod.ts";
import { startServer } from "../_server.ts";
import { writeActiveCapture } from "../../lib/store/active_capture.ts";
import { recordedEvents } from "./_gateway.ts";
import { RETAIL_INSTRUCTIONS, servedRetail } from "./_served_retail.ts";
import { geminiAnswer, startGeminiModel } from "./_gemini_model.ts";

const retail = servedRetail();
const EMAIL = "sofia.li7352@example.com";
const USER_ID = "sofia_li_9219";
const ASK =
  `Hi, my email is ${EMAIL}. I would like to cancel an order I no longer need.`;
const FIRST = { name: "find_user_id_by_email", args: { email: EMAIL } };
const SECOND = { name: "get_user_details", args: { user_id: USER_ID } };
const TOOLS = [{
  functionDeclarations: RETAIL_TOOL_SCHEMAS.map((
    { name, description, parameters },
  ) => ({ name, description, parametersJsonSchema: parameters })),
}];
const CAPTURE = "cap_served_gemini";

Deno.test("a package's lookup reaches the @google/genai client as a functionCall, whole and streamed, with no upstream request", async () => {
  await using model = startGeminiModel(() => ({
    json: geminiAnswer({ text: "from the model" }),
  }));
  await using server = await startServer({
    modelGateway: {
      upstreams: { gemini: model.url },
      packages: { "": new GatewayDriver(retail.pkg) },
    },
  }); // Recorded into the active capture, as an unmodified client records.
  writeActiveCapture(server.root, CAPTURE);

  const served: string[] = [];
  const real = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await real(input, init);
    if (String(input).startsWith(server.url)) {
      served.push(res.headers.get("x-harness-served") ?? "");
    }
    return res;
  }) as typeof fetch;
  try {
    const ai = new GoogleGenAI({
      apiKey: "AIza-test",
      httpOptions: { baseUrl: server.url },
    });
    const env = new RetailEnv(retail.db);
    const config = { systemInstruction: RETAIL_INSTRUCTIONS, tools: TOOLS };
    const user = { role: "user", parts: [{ text: ASK }] };
    const first = await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: [user],
      config,
    });
    deepEqual(
      first.functionCalls?.map((c) => ({ name: c.name, args: c.args })),
      [FIRST],
    );
    equal(first.usageMetadata?.totalTokenCount, 0);
    const call = first.functionCalls![0];
    const calls: { name?: string; args?: unknown }[] = [];
    for await (
      const c of await ai.models.generateContentStream({
        model: "gemini-2.5-flash",
        contents: [user, first.candidates![0].content!, {
          role: "user",
          parts: [{
            functionResponse: {
              id: call.id,
              name: call.name,
              response: { output: env.respond(FIRST.name, FIRST.args) },
            },
          }],
        }],
        config,
      })
    ) calls.push(...(c.functionCalls ?? []));
    deepEqual(calls.map((c) => ({ name: c.name, args: c.args })), [SECOND]);
    deepEqual(served, ["package", "package"]);
    equal(model.requests.length, 0, "no upstream request");
    // Another conversation (no retail tools): passed through to the model.
    const other = await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: "Write a haiku.",
    });
    equal(other.text, "from the model");
    equal(model.requests.length, 1);
    const evs = await recordedEvents(server, CAPTURE);
    const byPackage = evs.filter((e) =>
      e.kind === "model.responded" &&
      (e.payload as { served_by?: string }).served_by
    );
    equal(byPackage.length, 2);
    const health = (await (await real(`${server.url}/health`)).json())
      .model_gateway;
    equal(health.served, 2);
  } finally {
    globalThis.fetch = real;
  }
});
