import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  buildMcpServer,
  McpUnavailableError,
} from "../../lib/control/mcp_server.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { tempDir } from "../_helpers.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

Deno.test({
  name:
    "ingest.ts mcp over a real stdio transport: list tools, start a capture, mark an outcome, read the lineage report",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    {
      using store = new HarnessStore(dir.path);
      generateDeskEpisodes(store.sink("desk"), "desk", 40);
      generateDeskEpisodes(store.sink("desk_one"), "desk_one", 1);
    }
    let oneEpisode: string;
    {
      using store = new HarnessStore(dir.path, { readOnly: true });
      oneEpisode = store.listEpisodes("desk_one")[0].episode_id;
    }
    const client = new Client({ name: "test", version: "0" });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "--quiet",
          `--allow-read`,
          `--allow-write=${dir.path}`,
          "--allow-env",
          "--allow-net=127.0.0.1",
          INGEST,
          "mcp",
          "--root",
          dir.path,
        ],
        stderr: "ignore",
      }),
    );
    const tools = (await client.listTools()).tools.map((t: { name: string }) =>
      t.name
    ).sort();
    assertEquals(tools, [
      "harness_capture_finish",
      "harness_capture_lineage",
      "harness_capture_list",
      "harness_capture_outcome",
      "harness_capture_start",
      "harness_capture_summary",
      "harness_compile",
    ]);
    // The name rule strict clients (Claude Desktop, the OpenAI API) apply.
    for (const t of tools) assertOk(/^[a-zA-Z0-9_-]{1,64}$/.test(t), t);
    const listed = (await client.listTools()).tools as {
      name: string;
      inputSchema: {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      outputSchema?: unknown;
    }[];
    const finish = listed.find((t) => t.name === "harness_capture_finish")!;
    assertEquals(finish.inputSchema.required, ["capture_id"]);
    assertOk(
      listed.every((t) => t.outputSchema),
      "every tool has an output schema",
    );
    // A missing or mistyped argument is a JSON-RPC error naming it; nothing runs.
    for (
      const [args, pattern] of [
        [{}, /capture_id/],
        [{ capture_id: 42 }, /capture_id/],
        [{ capture_id: "x", extra: 1 }, /extra/],
      ] as const
    ) {
      let message = "";
      try {
        await client.callTool({
          name: "harness_capture_finish",
          arguments: args,
        });
      } catch (err) {
        message = (err as Error).message;
      }
      assertOk(
        pattern.test(message) && /-32602|Invalid arguments/.test(message),
        message,
      );
    }
    const start = await client.callTool({
      name: "harness_capture_start",
      arguments: { id: "cap_mcp", label: "via mcp" },
    });
    assertEquals(
      (start.structuredContent as { capture_id: string }).capture_id,
      "cap_mcp",
    );
    // An episode the capture does not hold: refused, naming what it holds.
    const unheld = await client.callTool({
      name: "harness_capture_outcome",
      arguments: { capture_id: "cap_mcp", episode_id: "ep_1", success: true },
    });
    assertEquals(unheld.isError, true);
    const said = JSON.stringify(unheld.content);
    assertOk(/\\"ep_1\\" is not in capture \\"cap_mcp\\"/.test(said), said);
    const outcome = await client.callTool({
      name: "harness_capture_outcome",
      arguments: {
        capture_id: "desk_one",
        episode_id: oneEpisode,
        success: false,
        note: "wrong order",
      },
    });
    assertEquals(outcome.isError, undefined);
    const lineage = await client.callTool({
      name: "harness_capture_lineage",
      arguments: { capture_id: "desk_one" },
    });
    const report = lineage.structuredContent as {
      chain: { ok: boolean };
      episodes: { episode_id: string; success: boolean }[];
    };
    assertEquals(report.chain.ok, true);
    assertEquals(report.episodes.map((e) => [e.episode_id, e.success]), [[
      oneEpisode,
      false,
    ]]);
    const summary = await client.callTool({
      name: "harness_capture_summary",
      arguments: { capture_id: "desk_one" },
    });
    assertEquals(summary.isError, undefined, JSON.stringify(summary.content));
    const summarized = summary.structuredContent as {
      capture_id: string;
      outcomes: Record<string, { success: boolean }>;
      package: unknown;
    };
    assertEquals(summarized.capture_id, "desk_one");
    assertEquals(summarized.outcomes[oneEpisode].success, false);
    assertEquals(summarized.package, null);
    const missing = await client.callTool({
      name: "harness_capture_summary",
      arguments: { capture_id: "nope" },
    });
    assertEquals(missing.isError, true);
    const list = await client.callTool({
      name: "harness_capture_list",
      arguments: {},
    });
    assertOk(JSON.stringify(list.structuredContent).includes("cap_mcp"));
    const compiled = await client.callTool({
      name: "harness_compile",
      arguments: {
        capture_ids: ["desk"],
        name: "desk",
        effects: DESK_EFFECTS,
        contracts: {
          "predicate|find_user>list_orders>get_order|get_order#0.status": [
            "policy",
          ],
        },
      },
    });
    assertEquals(compiled.isError, undefined, JSON.stringify(compiled.content));
    const c = compiled.structuredContent as {
      file: string;
      registered: boolean;
      verification: { structural_ok: boolean };
    };
    assertEquals([c.registered, c.verification.structural_ok], [true, true]);
    assertOk(Deno.statSync(c.file).isFile);
    await client.close();
  },
});

Deno.test("buildMcpServer() without the SDK says how to get it", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const err = await assertRejects(
    () =>
      buildMcpServer(store, {
        loadSdk: () => Promise.reject(new Error("module not found")),
      }),
    McpUnavailableError,
  );
  assertOk(
    /deno cache npm:@modelcontextprotocol\/sdk/.test(err.message),
    err.message,
  );
});

/** What `deno info --json` says about one module of a graph. */
interface GraphModule {
  specifier: string;
  kind?: string;
  local?: string;
  dependencies?: { code?: { specifier: string } }[];
}

/** A call that serves, listens or spawns a process. */
const SERVES_OR_SPAWNS = /\bDeno\s*\.\s*(listen|listenTls|serve|Command)\b/;

/**
 * Walks the module graph of `root` as `deno info --json` resolves it (static
 * imports and literal dynamic ones) and lists what a library must not reach:
 * npm packages, and local modules that name `Deno.listen`, `Deno.listenTls`,
 * `Deno.serve` or `Deno.Command`.
 */
async function forbiddenReach(root: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL(root, import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: GraphModule[];
  };
  const bySpec = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const todo = [...info.roots];
  const found: string[] = [];
  while (todo.length) {
    const s = todo.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    const m = bySpec.get(s);
    if (s.startsWith("npm:") || m?.kind === "npm") {
      found.push(`${s} is an npm package`);
      continue;
    }
    if (s.startsWith("file:")) {
      const text = Deno.readTextFileSync(new URL(s));
      const hit = SERVES_OR_SPAWNS.exec(text);
      if (hit) found.push(`${s} names ${hit[0]}`);
    }
    for (const d of m?.dependencies ?? []) {
      if (d.code) todo.push(d.code.specifier);
    }
  }
  // A graph that never reached its own root was not walked.
  assertOk(seen.size > 1, `the graph of ${root} holds only ${[...seen]}`);
  return found.sort();
}

Deno.test("mod.ts's module graph reaches no server, no process spawning and no npm package", async () => {
  assertEquals(await forbiddenReach("../../mod.ts"), []);
  // The same walk finds what the entry module reaches, so it can fail.
  const entry = await forbiddenReach("../../ingest.ts");
  assertOk(
    entry.some((f) => f.includes("/lib/ingest/http1/_server.ts names Deno")),
    entry.join("\n"),
  );
  assertOk(
    entry.some((f) => f.includes("/lib/cli/cmd_serve.ts names Deno")),
    entry.join("\n"),
  );
});
