/**
 * A package served at the model API, on bad input: a request the package
 * does not fit passes through untouched (the body the client sent, the
 * answer the upstream sent, byte for byte) with the reason in
 * `x-harness-package-skipped` and on `/health`; `serve --package` refuses a
 * malformed, tampered or tree-form package at start-up, saying why; and an
 * upstream that goes down mid-conversation gives the client the API's own
 * error (502) and loses nothing recorded before.
 *
 * @module
 */
import { join } from "node:path";
import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { runMain } from "../_cli.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { GatewayDriver } from "../../lib/forms/agent/gateway_driver.ts";
import { servedPackages } from "../../lib/cli/served_packages.ts";
import { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { type GatewayRig, startGateway } from "./_gateway.ts";
import { type ChatMessage, chatUntilForwarded } from "./_served_loop.ts";
import { RETAIL_CHAT_TOOLS } from "./_retail_agent.ts";
import {
  RESPONSES_TOOLS,
  RETAIL_INSTRUCTIONS,
  servedRetail,
} from "./_served_retail.ts";

const retail = servedRetail();
const ASK =
  "Hi, my email is sofia.li7352@example.com. Please cancel my pending order #W8855135, I no longer need it.";

async function servedRig(capture: string): Promise<GatewayRig> {
  return await startGateway({
    capture,
    gateway: { packages: { "": new GatewayDriver(retail.pkg) } },
  });
}

async function health(rig: GatewayRig) {
  return (await (await fetch(`${rig.server.url}/health`)).json())
    .model_gateway;
}

type ChatTool = (typeof RETAIL_CHAT_TOOLS)[number] & {
  function: { name: string; parameters?: Record<string, unknown> };
};
const chatTools = RETAIL_CHAT_TOOLS as ChatTool[];

Deno.test("a request the package does not fit is forwarded untouched, byte for byte both ways, with the reason", async () => {
  await using rig = await servedRig("cap_skipped");
  const chat = (tools: unknown[]) =>
    JSON.stringify({
      model: "gpt-agent",
      messages: [
        { role: "system", content: RETAIL_INSTRUCTIONS },
        { role: "user", content: ASK },
      ],
      tools,
    });
  const renamed = chatTools.map((t) =>
    t.function.name === "find_user_id_by_email"
      ? {
        ...t,
        function: {
          ...t.function,
          parameters: {
            type: "object",
            properties: { mail: { type: "string" } },
            required: ["mail"],
          },
        },
      }
      : t
  );
  const cases: { path: string; body: string; reason: RegExp }[] = [
    {
      path: "/v1/chat/completions",
      body: chat([...chatTools, {
        type: "function",
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: {} },
        },
      }]),
      reason:
        /^the request offers get_weather, a tool the package does not know$/,
    },
    {
      path: "/v1/chat/completions",
      body: chat(renamed),
      reason:
        /^the schema of find_user_id_by_email changed: it has no email \(the package learned them\)$/,
    },
    {
      path: "/v1/chat/completions",
      body: chat(
        chatTools.filter((t) => t.function.name !== "get_user_details"),
      ),
      reason:
        /^the request does not offer get_user_details, which the package looks up$/,
    },
    {
      path: "/v1/responses",
      body: JSON.stringify({
        model: "gpt-agent",
        previous_response_id: "resp_earlier",
        input: [{ role: "user", content: ASK }],
        tools: RESPONSES_TOOLS,
      }),
      reason: /^previous_response_id keeps the conversation upstream/,
    },
    {
      path: "/v1/chat/completions",
      body: JSON.stringify({
        ...JSON.parse(
          chat(
            chatTools.filter((t) =>
              t.function.name !== "find_user_id_by_email"
            ),
          ),
        ),
        stream: true,
      }),
      reason:
        /^the request does not offer find_user_id_by_email, which the package looks up$/,
    },
    {
      path: "/v1/chat/completions",
      body: '{"model": "gpt-agent", "messages": [',
      reason: /^the request cannot be read: /,
    },
  ];
  const skipped: [string, string | null][] = [];
  for (const [i, c] of cases.entries()) {
    rig.up.push({
      text: `Upstream answer ${i}.`,
      toolCalls: [{
        name: "find_user_id_by_email",
        arguments: { email: "sofia.li7352@example.com" },
      }],
    });
    const res = await fetch(`${rig.server.url}${c.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...rig.headers },
      body: c.body,
    });
    const text = await res.text();
    const ex = rig.up.requests[i];
    assertEquals(ex.body, c.body, `case ${i}: the request changed`);
    assertEquals(text, ex.response!.body, `case ${i}: the answer changed`);
    assertEquals(res.headers.get("x-harness-served"), null);
    const why = res.headers.get("x-harness-package-skipped") ?? "";
    assertOk(c.reason.test(why), `case ${i}: ${why}`);
    skipped.push([why, res.headers.get("x-harness-episode")]);
  }
  assertEquals(rig.up.requests.length, cases.length);
  assertEquals(rig.up.requests.at(-2)!.response!.stream, true);
  // Recorded like any request the gateway forwards (the unreadable one
  // cannot be).
  const events = await rig.events();
  const requested = events.filter((e) => e.kind === "model.requested");
  assertEquals(requested.length, cases.length - 1);
  // Each with what the package did and why, under the episode its answer
  // named (the unreadable one has none).
  assertEquals(
    requested.map((e) => [e.payload.package, e.episode_id]),
    skipped.slice(0, -1).map(([why, episode]) => [
      {
        id: `retail@${retail.pkg.digest}`,
        outcome: "passed_through",
        reason: why,
      },
      episode,
    ]),
  );
  assertEquals(skipped.at(-1)![1], null);
  assertEquals(
    events.filter((e) =>
      e.kind === "model.responded" && e.payload.served_by !== undefined
    ),
    [],
  );
  const h = await health(rig);
  assertEquals(h.passed_through, cases.length);
  assertEquals(h.served, 0);
  assertOk(
    /^the request cannot be read: /.test(h.last_pass_through),
    h.last_pass_through,
  );
});

Deno.test("serve --package refuses a malformed, a tampered and a tree-form package at start-up, saying why", async () => {
  await using dir = await tempDir();
  const file = (name: string, text: string) => {
    const path = join(dir.path, name);
    Deno.writeTextFileSync(path, text);
    return path;
  };
  const good = file("retail.json", JSON.stringify(retail.pkg));
  const malformed = file("malformed.json", '{"schema_version": "harness.pa');
  const doc = JSON.parse(JSON.stringify(retail.pkg));
  const root = doc.ir.nodes[doc.ir.root];
  const lookup = doc.ir.nodes[root.lookups[0]];
  // Widen what a lookup reads from, keep the digest.
  lookup.args[0].sources.push({ from: "user_text" });
  const tampered = file("tampered.json", JSON.stringify(doc));
  // A tree package that does something (a tree of no step is refused at
  // compile): the order desk's.
  using deskStore = new HarnessStore(join(dir.path, "desk"));
  generateDeskEpisodes(deskStore.sink("desk"), "desk", 30);
  const tree = compileBehavior(await loadEpisodes(deskStore, "desk"), {
    name: "desk_tree",
    effects: DESK_EFFECTS,
    form: "tree",
  }).package;
  assertEquals(tree.ir.nodes[tree.ir.root].kind === "agent", false);
  const treeFile = file("tree.json", JSON.stringify(tree));

  // The library the command uses: the good file is ready to serve.
  const ok = await servedPackages([good, `named=${good}`]);
  assertEquals(Object.keys(ok).sort(), ["", "named"]);
  assertEquals(ok[""].id, `retail@${retail.pkg.digest}`);

  // A port already taken: were a bad package accepted, the server could
  // not start and the command would fail another way instead of hanging.
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serve = (spec: string) =>
    runMain([
      "serve",
      "--package",
      spec,
      "--port",
      String(taken.addr.port),
      "--upstream-openai",
      "http://127.0.0.1:9/v1",
      "--upstream-anthropic",
      "http://127.0.0.1:9",
      "--root",
      join(dir.path, "store"),
    ]);
  const cases: [string, RegExp][] = [
    [
      malformed,
      /Cannot serve .*malformed\.json: Cannot read the behavior package .*malformed\.json: /,
    ],
    [
      tampered,
      /Cannot serve .*tampered\.json: Behavior package digest mismatch: it says sha256:[0-9a-f]{64} but its content hashes to sha256:[0-9a-f]{64}/,
    ],
    [
      treeFile,
      /Cannot serve .*tree\.json: desk_tree is a tree-form package: it calls tools itself/,
    ],
    [
      `shop=${tampered}`,
      /Cannot serve .*tampered\.json: Behavior package digest mismatch/,
    ],
  ];
  for (const [spec, reason] of cases) {
    const r = await serve(spec);
    assertEquals(r.code, 2, `${spec}: ${r.out}${r.err}`);
    assertOk(reason.test(r.err), r.err);
    assertEquals(r.out.includes("harness ingest server on"), false, r.out);
  }
  // Nothing was started: no store was made.
  assertEquals(
    [...Deno.readDirSync(dir.path)].map((e) => e.name).includes("store"),
    false,
  );
});

Deno.test("the upstream going down mid-conversation gives the client a 502 in the API's shape, and nothing recorded before is lost", async () => {
  await using rig = await servedRig("cap_down");
  const client = rig.openai();
  const messages: ChatMessage[] = [
    { role: "system", content: RETAIL_INSTRUCTIONS },
    { role: "user", content: ASK },
  ];
  rig.up.push({ text: "Let me check that order for you." });
  const ask = async (m: ChatMessage[]) => {
    const { data, response } = await client.chat.completions.create({
      model: "gpt-agent",
      messages: m,
      tools: RETAIL_CHAT_TOOLS,
    }).withResponse();
    return {
      data,
      served: response.headers.get("x-harness-served") === "package",
    };
  };
  const { answer, served } = await chatUntilForwarded(
    ask,
    messages,
    new RetailEnv(retail.db),
  );
  assertOk(served >= 3);
  messages.push({
    role: "assistant",
    content: answer.choices[0].message.content,
  });
  const before = await rig.events();
  assertOk(before.length > 10, `${before.length} events`);

  // The upstream goes away; the next request needs the model.
  await rig.up.close();
  messages.push({ role: "user", content: "Yes, please go ahead." });
  const err = await assertRejects(() => ask(messages)) as Error & {
    status?: number;
    error?: { type?: string; message?: string };
  };
  assertEquals(err.status, 502);
  assertEquals(err.error?.type, "api_error");
  assertOk(
    (err.error?.message ?? "").includes(new URL(rig.up.url).origin),
    err.error?.message,
  );
  const raw = rig.tap.responses.at(-1)!;
  assertEquals(raw.status, 502);
  const body = JSON.parse(await raw.body as string);
  assertEquals(Object.keys(body), ["error"]);

  const after = await rig.events();
  assertEquals(
    after.slice(0, before.length).map((e) => canonicalJson(e)),
    before.map((e) => canonicalJson(e)),
  );
  const report = await rig.server.store.verifyCapture(rig.capture);
  assertEquals(report.ok, true);
  assertEquals((await health(rig)).upstream_errors >= 1, true);
});

Deno.test("the upstream failing while a refused answer is asked again gives the client a 502; the refused answer is counted and recorded", async () => {
  await using rig = await servedRig("cap_reask_down");
  const client = rig.openai();
  const messages: ChatMessage[] = [
    { role: "system", content: RETAIL_INSTRUCTIONS },
    { role: "user", content: ASK },
  ];
  rig.up.push(
    {
      toolCalls: [{
        name: "cancel_pending_order",
        arguments: { order_id: "#W9300146", reason: "no longer needed" },
      }],
    },
    // The re-ask's answer breaks off half way: unreadable, a 502.
    { text: "Cancelled.", cutAfterChunks: 0 },
  );
  const err = await assertRejects(() =>
    chatUntilForwarded(
      async (m) => {
        const { data, response } = await client.chat.completions.create({
          model: "gpt-agent",
          messages: m,
          tools: RETAIL_CHAT_TOOLS,
        }).withResponse();
        return {
          data,
          served: response.headers.get("x-harness-served") === "package",
        };
      },
      messages,
      new RetailEnv(retail.db),
    )
  ) as Error & { status?: number };
  assertEquals(err.status, 502);
  assertEquals(rig.up.requests.length, 2);
  assertEquals((await health(rig)).refusals, 1);
  const events = await rig.events();
  assertEquals((await rig.server.store.verifyCapture(rig.capture)).ok, true);
  // The model's refused answer (and the tokens it cost) is recorded.
  assertEquals(
    events.filter((e) =>
      e.kind === "model.responded" && e.payload.refused !== undefined
    ).length,
    1,
  );
});

Deno.test("serve --package with --trust serves only packages a trusted key signed", async () => {
  await using dir = await tempDir();
  const { generateSigningKey, importSigningKey, signPackage } = await import(
    "../../lib/package/package_signature.ts"
  );
  const mine = await generateSigningKey();
  const other = await generateSigningKey();
  const signed = await signPackage(
    retail.pkg,
    await importSigningKey(mine.privateJwk),
  );
  const signedFile = `${dir.path}/signed.json`;
  const plainFile = `${dir.path}/plain.json`;
  Deno.writeTextFileSync(signedFile, JSON.stringify(signed));
  Deno.writeTextFileSync(plainFile, JSON.stringify(retail.pkg));
  const served = await servedPackages([signedFile], [mine.key]);
  assertEquals(served[""].id, `retail@${retail.pkg.digest}`);
  await assertRejects(
    () => servedPackages([plainFile], [mine.key]),
    /not signed/,
  );
  await assertRejects(
    () => servedPackages([signedFile], [other.key]),
    /not a trusted key/,
  );
});
