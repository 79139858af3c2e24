/**
 * Issue 43's test: a real Claude Code (npm, offline) through `serve
 * --package` of the package `compile` makes with its defaults from the
 * lab's `dataflow` variants 1–7 recorded through the model gateway
 * (`install claude-code --gateway`, the scripted model of
 * `tools/_dataflow_model.ts` upstream, each session that wrote its report
 * marked successful as a user marks it). On each held-out variant (8, 9)
 * Claude Code exits 0 and writes the recorded report byte for byte with at
 * most 2 upstream model calls (5 through the plain gateway) and no call
 * refused; a session of another task through the same `/p/NAME` gets the
 * same answer and the same number of upstream calls as through the plain
 * gateway; and with a model whose Write is refused and whose upstream fails
 * the re-ask (500), Claude Code gets the gave-up words and exits 0.
 *
 * Claude Code is found as `tools/_dataflow_host.ts` finds it
 * (`HARNESS_CLAUDE_CODE`, else `/tmp/cc/node_modules/.bin/claude`); the
 * test is ignored, saying so, when it is not there:
 *
 * ```sh
 * npm install --prefix /tmp/cc @anthropic-ai/claude-code@2.1.328
 * ```
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import {
  dataflowAnswer,
  startDataflowModel,
} from "../../tools/_dataflow_model.ts";
import { messageStream } from "../model_gateway/_claude_code.ts";
import { DATAFLOW_VARIANTS } from "../../tools/_dataflow_variants.ts";
import {
  expectedReport,
  findClaudeCode,
  runSession,
  type SessionRun,
  startServe,
} from "../../tools/_dataflow_host.ts";
import { workspace } from "../compiler/_dataflow.ts";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const CLAUDE = findClaudeCode();

/** Another task, in a folder of the same files. */
const OTHER =
  "Count the lines of ledger.csv with wc -l and tell me the number.";

async function deno(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...args],
    cwd: REPO,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  assertOk(out.success, `deno run ${args.join(" ")}: ${text}`);
  return text;
}

/**
 * The scenario's model gone wrong at the leaf: its Write says a balance the
 * ledger did not show, and asked again it fails (500).
 */
function faultyModel() {
  const requests: unknown[] = [];
  let wrote = false;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const body = await req.json();
      requests.push(body);
      if (wrote) {
        return Response.json({
          type: "error",
          error: { type: "api_error", message: "Internal server error" },
        }, { status: 500 });
      }
      const cwd = /Primary working directory: ([^\\"\s]+)/.exec(
        JSON.stringify(body),
      )?.[1] ?? "";
      const blocks = dataflowAnswer({ messages: body.messages, cwd }) ??
        [{ type: "text", text: "OK." }];
      for (const b of blocks) {
        if (b.name !== "Write") continue;
        const input = b.input as { content: string };
        input.content = input.content.replace(/balance \S+/, "balance 999.00");
        wrote = true;
      }
      return new Response(
        messageStream(blocks, { input_tokens: 100, output_tokens: 20 }),
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Claude Code's final answer (its `stream-json` result). */
function resultOf(s: SessionRun): string {
  for (const line of s.stdout.split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    const j = JSON.parse(line);
    if (j.type === "result") return String(j.result);
  }
  return "";
}

Deno.test({
  name: CLAUDE
    ? "serve --package: real Claude Code on held-out dataflow variants gets the tree's fixed steps from the gateway and the model only at the leaf; another task passes through; a failing re-ask gives words"
    : "serve --package with real Claude Code (ignored: no Claude Code; npm install --prefix /tmp/cc @anthropic-ai/claude-code@2.1.328, or set HARNESS_CLAUDE_CODE)",
  ignore: CLAUDE === null,
  async fn() {
    const claude = CLAUDE!;
    await using dir = await tempDir();
    const scratch = await Deno.realPath(dir.path);
    const root = `${scratch}/root`;
    await using model = startDataflowModel();
    // 1. Record variants 1–7 through the gateway.
    {
      await using serve = await startServe({ root, upstream: model.url });
      await deno([
        "ingest.ts",
        "capture",
        "start",
        "--id",
        "train",
        "--root",
        root,
      ]);
      for (const [i, v] of DATAFLOW_VARIANTS.slice(0, 7).entries()) {
        const s = await runSession({
          claude,
          scratch,
          name: `train-${i + 1}`,
          variant: v,
          server: serve.url,
        });
        assertEquals([s.code, s.report], [0, expectedReport(v)], s.stderr);
        assertOk(s.session, "Claude Code names its session");
        await deno([
          "ingest.ts",
          "capture",
          "outcome",
          "train",
          s.session,
          "--success",
          "--root",
          root,
        ]);
      }
    }
    // 2. Compile with the defaults.
    const out = `${scratch}/out`;
    const compiled = await deno([
      "compile.ts",
      "--capture",
      "train",
      "--out",
      out,
      "--name",
      "dataflow",
      "--root",
      root,
    ]);
    const file = `${out}/dataflow.package.json`;
    const pkg = JSON.parse(await Deno.readTextFile(file));
    assertEquals(pkg.ir.nodes[pkg.ir.root].kind, "sequence", compiled);
    assertEquals(pkg.manifest.not_servable, undefined, compiled);
    assertEquals(pkg.applies_to.opening, "same_text");
    assertOk(/7 episodes \(7 clean\)/.test(compiled), compiled);
    // 3. Serve it at /p/dataflow beside the plain gateway.
    await using serve = await startServe({
      root,
      upstream: model.url,
      args: ["--package", `dataflow=${file}`],
    });
    const health = async () =>
      (await (await fetch(`${serve.url}/health`)).json()).model_gateway;
    const session = async (
      name: string,
      k: number,
      route: string,
      prompt?: string,
    ) => {
      const before = model.requests.length;
      const s = await runSession({
        claude,
        scratch,
        name,
        variant: DATAFLOW_VARIANTS[k],
        server: serve.url,
        baseUrl: serve.url + route,
        prompt,
      });
      return { s, upstream: model.requests.length - before };
    };
    for (const k of [7, 8]) {
      const v = DATAFLOW_VARIANTS[k];
      const recorded = workspace(`v${k + 1}`).report.content;
      const plain = await session(`v${k + 1}-plain`, k, "");
      assertEquals(plain.s.code, 0, plain.s.stderr);
      assertEquals(plain.s.report, recorded);
      assertEquals(plain.upstream, 5);
      const h0 = await health();
      const served = await session(`v${k + 1}-served`, k, "/p/dataflow");
      const h1 = await health();
      assertEquals(served.s.code, 0, served.s.stdout.slice(-3000));
      assertEquals(served.s.report, recorded, `v${k + 1}`);
      assertEquals(served.s.report, expectedReport(v));
      assertOk(
        served.upstream <= 2,
        `v${k + 1}: ${served.upstream} upstream model calls`,
      );
      // The queue grep, the Read and the ledger grep, from the gateway.
      assertEquals((h1.served ?? 0) - (h0.served ?? 0), 3);
      assertEquals((h1.refusals ?? 0) - (h0.refusals ?? 0), 0);
      assertEquals((h1.gave_up ?? 0) - (h0.gave_up ?? 0), 0);
    }
    // 4. Another task through the same route: as without the package.
    const plain = await session("other-plain", 7, "", OTHER);
    const h0 = await health();
    const other = await session("other-served", 7, "/p/dataflow", OTHER);
    const h1 = await health();
    assertEquals([other.s.code, plain.s.code], [0, 0]);
    assertEquals(resultOf(other.s), resultOf(plain.s));
    assertEquals(other.upstream, plain.upstream);
    assertEquals((h1.served ?? 0) - (h0.served ?? 0), 0);
    assertOk(
      /does not open as the 7 training sessions did/.test(
        h1.last_pass_through ?? "",
      ),
      JSON.stringify(h1),
    );
    // 5. A model whose Write is refused and whose re-ask fails: Claude
    // Code gets the gave-up words, not an error (before issue 43 it got
    // the 500, retried for minutes and exited 1).
    await using faulty = faultyModel();
    await using served = await startServe({
      root: `${scratch}/root_faulty`,
      upstream: faulty.url,
      args: ["--package", `dataflow=${file}`],
    });
    const v = DATAFLOW_VARIANTS[8];
    const s = await runSession({
      claude,
      scratch,
      name: "v9-faulty",
      variant: v,
      server: served.url,
      baseUrl: `${served.url}/p/dataflow`,
    });
    assertEquals(s.code, 0, s.stdout.slice(-3000));
    assertOk(
      /^I cannot do that: content must read/.test(resultOf(s)),
      resultOf(s),
    );
    assertEquals(
      s.report,
      null,
      "no report with a balance the ledger did not show",
    );
    assertEquals(faulty.requests.length, 2);
  },
});
