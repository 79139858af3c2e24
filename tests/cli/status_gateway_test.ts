/**
 * `ingest status` with the real server (issues 42 item 4, 48 item 9): down,
 * it says how to start one; up, serving a compiled package to an agent on
 * the official `openai` client (no header of ours), it shows the active
 * capture, the model gateway's counters and the package with what it did.
 * Then `capture inspect` (text and `--json`) and the HTML report show the
 * answers the package served, the call it refused with its arguments and
 * reason, and the request that passed through and why (from the
 * `model.requested.payload.package` the gateway records on every exchange
 * under a package).
 *
 * @module
 */
import OpenAI from "openai";
import { dirname, join } from "node:path";
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { startUpstreams } from "../model_gateway/_upstreams.ts";
import { RETAIL_CHAT_TOOLS } from "../model_gateway/_retail_agent.ts";
import {
  RETAIL_INSTRUCTIONS,
  servedRetail,
} from "../model_gateway/_served_retail.ts";
import {
  type ChatMessage,
  chatUntilForwarded,
} from "../model_gateway/_served_loop.ts";
import { BROWSER, open, required } from "../report/_browser.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;
const EMAIL = "sofia.li7352@example.com";
const PENDING = "#W8855135";
/** An order of another customer: the conversation never shows it. */
const NEVER_SHOWN = "#W9300146";
const ASK =
  `Hi, my email is ${EMAIL}. Please cancel my pending order ${PENDING}, I no longer need it.`;
const ALLOWED = { order_id: PENDING, reason: "no longer needed" };
const OUTSIDE = { order_id: NEVER_SHOWN, reason: "no longer needed" };

/** The CLI in its own process, on the store `root`. */
async function cli(root: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      `--allow-write=${dirname(root)}`,
      "--allow-net=127.0.0.1",
      "--allow-run",
      "--allow-env=HARNESS_ROOT,HARNESS_INGEST_TOKEN",
      INGEST,
      ...args,
      "--root",
      root,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    out: new TextDecoder().decode(out.stdout),
    err: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("ingest status when no server runs says how to start one", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const st = await cli(root, "status");
  assertEquals(st.code, 1);
  assertOk(st.out.includes(`ingest server not running for store ${root}`));
  assertOk(
    st.out.includes(`start it with "HARNESS_ROOT=${root} deno task serve"`),
    st.out,
  );
  assertOk(st.out.includes(`deno task daemon`), st.out);
  const json = JSON.parse((await cli(root, "status", "--json")).out);
  assertEquals(json.running, false);
  assertOk(/deno task serve/.test(json.start), json.start);
});

Deno.test({
  name:
    "ingest status, capture inspect and the report show a served package at work: answers served, the refused call with its arguments and reason, the pass-through and why, the gateway's counters",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "store");
    const retail = servedRetail();
    const pkgFile = join(dir.path, "retail.package.json");
    Deno.writeTextFileSync(pkgFile, JSON.stringify(retail.pkg));
    await using up = startUpstreams();
    const started = await cli(
      root,
      "serve",
      "--detach",
      "--port",
      "0",
      "--upstream-openai",
      up.openaiBase,
      "--package",
      pkgFile,
    );
    assertEquals(started.code, 0, started.err);
    const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(started.out)![1];
    try {
      // The agent: the official client, its base URL the gateway, nothing
      // of ours in its headers.
      const client = new OpenAI({
        baseURL: `${url}/v1`,
        apiKey: "sk-local",
        maxRetries: 0,
      });
      up.push(
        { toolCalls: [{ name: "cancel_pending_order", arguments: OUTSIDE }] },
        { toolCalls: [{ name: "cancel_pending_order", arguments: ALLOWED }] },
      );
      const messages: ChatMessage[] = [
        { role: "system", content: RETAIL_INSTRUCTIONS },
        { role: "user", content: ASK },
      ];
      const { answer, served } = await chatUntilForwarded(
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
      );
      assertOk(served >= 3, `${served} answers served`);
      const fn = answer.choices[0].message.tool_calls?.[0];
      assertEquals(
        fn?.type === "function" ? JSON.parse(fn.function.arguments) : null,
        ALLOWED,
      );
      // A request that offers a tool the package does not know: untouched.
      up.push({ text: "I can search the web for that." });
      await client.chat.completions.create({
        model: "gpt-agent",
        messages: [
          { role: "system", content: RETAIL_INSTRUCTIONS },
          { role: "user", content: "Hi, what is the weather today?" },
        ],
        tools: [...RETAIL_CHAT_TOOLS, {
          type: "function",
          function: {
            name: "web_search",
            parameters: {
              type: "object",
              properties: { q: { type: "string" } },
            },
          },
        }],
      });

      const st = await cli(root, "status");
      assertEquals(st.code, 0, st.err);
      const t = st.out;
      assertOk(t.includes(`ingest server running: ${url}`), t);
      assertOk(t.includes(`no active capture`), t);
      assertOk(/model gateway: 1?\d requests \(0 streamed\)/.test(t), t);
      assertOk(
        t.includes(
          `serving package retail@${retail.pkg.digest} at ${url}/v1`,
        ),
        t,
      );
      assertOk(
        new RegExp(
          `packages: ${served} answers served, 1 call refused, 1 request passed through, 0 gave up; last pass-through: .*web_search`,
        ).test(t),
        t,
      );
      const sj = JSON.parse((await cli(root, "status", "--json")).out);
      assertEquals(sj.model_gateway.served, served);
      assertEquals(sj.model_gateway.refusals, 1);
      assertEquals(sj.active_capture, null);

      const ins = await cli(root, "capture", "inspect", "default", "--json");
      assertEquals(ins.code, 0, ins.err);
      const inspection = JSON.parse(ins.out);
      assertEquals(inspection.package.requests.served, served);
      const refused = inspection.episodes.flatMap((
        e: { package?: { refused: { tool: string; arguments: unknown }[] } },
      ) => e.package?.refused ?? []);
      assertEquals(refused.length, 1);
      assertEquals(refused[0].tool, "cancel_pending_order");
      assertEquals(refused[0].arguments, OUTSIDE);
      assertOk(refused[0].reason.length > 0);
      // The served lookups came before any upstream request (lower bound 0);
      // the next upstream request is the one whose answer was refused.
      const saved = inspection.package.tokens_saved;
      const refusedPrompt = inspection.package.upstream.refused_tokens.input;
      assertOk(refusedPrompt > 0);
      assertEquals(saved, {
        requests: served,
        prompt_at_least: 0,
        prompt_at_most: served * refusedPrompt,
        no_request_before: served,
        no_request_after: 0,
      });
      // Every exchange under the package says what became of it
      // (`model.requested.payload.package`): the pass-through and why.
      const r = inspection.package.requests;
      assertEquals([r.passed_through, r.gave_up], [1, 0]);
      assertOk(r.forwarded >= 1, JSON.stringify(r));
      const passed = inspection.episodes.flatMap((
        e: { package?: { passed_through: { reason: string }[] } },
      ) => e.package?.passed_through ?? []);
      assertEquals(passed.length, 1);
      assertOk(/web_search/.test(passed[0].reason), passed[0].reason);
      // The two conversations are two episodes (no header of ours).
      assertEquals(inspection.episodes.length, 2);
      const text = await cli(root, "capture", "inspect", "default");
      assertOk(/passed +#\d+ .*web_search/.test(text.out), text.out);
      assertOk(/refused +#\d+ cancel_pending_order/.test(text.out), text.out);
      assertOk(/served +#\d+ find_user_id_by_email/.test(text.out), text.out);

      if (BROWSER || required) {
        const file = join(dir.path, "report.html");
        const rep = await cli(
          root,
          "report",
          "default",
          "--out",
          file,
        );
        assertEquals(rep.code, 0, rep.err);
        const { dom } = await open(file);
        assertOk(dom.includes('data-status="rendered"'));
        const rows = [...dom.matchAll(/data-package-row="([^"]+)"/g)].map((
          m,
        ) => m[1]);
        assertEquals(rows.filter((r) => r === "served").length, served);
        assertEquals(rows.filter((r) => r === "refused").length, 1);
        // The other conversation's episode: the request that passed through.
        const other = inspection.episodes.find((
          e: { package?: { passed_through: unknown[] } },
        ) => e.package?.passed_through.length).episode_id;
        const second = await open(`${file}#ep=${encodeURIComponent(other)}`);
        assertEquals(
          [...second.dom.matchAll(/data-package-row="([^"]+)"/g)].map((m) =>
            m[1]
          ),
          ["passed through"],
        );
        assertOk(
          second.dom.includes(passed[0].reason.replaceAll("&", "&amp;")),
        );
        assertOk(dom.includes(refused[0].reason.replaceAll("&", "&amp;")));
      }
    } finally {
      const down = await cli(root, "stop");
      assertEquals(down.code, 0, down.err);
    }
  },
});
