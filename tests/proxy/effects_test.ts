import { assertEquals, assertOk } from "../_assert.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { HarnessStore } from "../../lib/store/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { resolveEffects } from "../../lib/compiler/effects.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import type { ExposedTool } from "../../lib/trace/mod.ts";
import { buildStdioProxyServer } from "../../lib/proxy/mod.ts";
import { tempDir } from "../_helpers.ts";
import { cacheEverything, everythingUpstream } from "./_upstreams.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const NOTES = new URL("./_annotated_server.ts", import.meta.url).pathname;

// Over 80 lines: one scenario end to end, its steps and checks in order.
Deno.test({
  name:
    "resolveEffects() takes a proxied capture's effects from the upstreams' MCP annotations",
  ...opts,
  async fn() {
    await cacheEverything();
    await using dir = await tempDir();
    using store = new HarnessStore(dir.path);
    const { server, proxy } = await buildStdioProxyServer(
      [
        everythingUpstream(),
        {
          server: "notes",
          command: Deno.execPath(),
          args: ["run", "--quiet", "-A", NOTES],
        },
      ],
      { sink: store.sink("cap_mcp"), captureId: "cap_mcp", stderr: "ignore" },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(b);
    const call = (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args });
    for (const id of ["n1", "n2"]) {
      await call("notes__archive_note", { id });
      await call("notes__tag_note", { id });
      await call("notes__plain_tool", { id });
    }
    await call("notes__get_and_delete_note", { id: "n1" });
    await call("everything__echo", { message: "hi" });
    await call("everything__toggle-simulated-logging", {});
    await client.close();
    await proxy.close();

    const episodes = await loadEpisodes(store, "cap_mcp");
    // The toolset event carries each tool's annotations as declared.
    const exposed = episodes[0].events.find((e) =>
      e.kind === "toolset.exposed"
    )!;
    const tools = exposed.payload.tools as ExposedTool[];
    assertEquals(
      tools.find((t) => t.name === "notes__archive_note")?.annotations,
      { title: "Archived note", readOnlyHint: true },
    );
    assertEquals(
      tools.find((t) => t.name === "everything__echo")?.annotations,
      {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    );

    const r = resolveEffects(episodes);
    // Annotations win over what the names would suggest.
    assertEquals(r.effects["mcp:notes/archive_note"], "read");
    assertEquals(r.effects["mcp:notes/get_and_delete_note"], "destructive");
    assertEquals(r.effects["mcp:notes/tag_note"], "write");
    assertEquals(r.effects["mcp:everything/echo"], "read");
    assertEquals(r.effects["mcp:everything/toggle-simulated-logging"], "write");
    for (
      const t of [
        "mcp:notes/archive_note",
        "mcp:notes/get_and_delete_note",
        "mcp:notes/tag_note",
        "mcp:everything/echo",
        "mcp:everything/toggle-simulated-logging",
      ]
    ) assertEquals(r.source[t], "annotation", t);
    // A title alone says nothing about effects: the tool stays unknown.
    assertEquals(r.source["mcp:notes/plain_tool"], "unknown");
    assertEquals(r.unknown_calls["mcp:notes/plain_tool"], 2);

    // compileBehavior gets the same effects without being told any.
    const pkg = compileBehavior(episodes, { name: "notes" }).package;
    assertEquals(
      pkg.manifest.effects_source?.["mcp:notes/archive_note"],
      "annotation",
    );
    assertEquals(
      pkg.manifest.effects["mcp:notes/get_and_delete_note"],
      "destructive",
    );
    assertOk(Object.keys(pkg.manifest.effects).length >= tools.length);
  },
});
