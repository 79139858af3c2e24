import { assertEquals, assertOk } from "../_assert.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { HarnessStore } from "../../lib/store/mod.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import {
  buildStdioProxyServer,
  discoverStdioTools,
  namespacedName,
} from "../../proxy.ts";
import { tempDir } from "../_helpers.ts";
import { cacheEverything, everythingUpstream, FLAKY } from "./_upstreams.ts";

const PROXY = new URL("../../proxy.ts", import.meta.url).pathname;
const opts = { sanitizeOps: false, sanitizeResources: false };

async function events(root: string, cap: string): Promise<TraceEvent[]> {
  using store = new HarnessStore(root, { readOnly: false });
  assertEquals((await store.verifyCapture(cap)).ok, true);
  return await Array.fromAsync(store.readEvents(cap));
}

Deno.test({
  name:
    "proxy.ts in front of server-everything: namespaced tools with the upstream's schemas, results unchanged, calls recorded",
  ...opts,
  async fn() {
    await cacheEverything();
    await using dir = await tempDir();
    const upstream = everythingUpstream();
    const direct = await discoverStdioTools(upstream);
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: [
        "run",
        "--quiet",
        "--allow-run",
        `--allow-read`,
        `--allow-write=${dir.path}`,
        "--allow-env",
        "--allow-net=127.0.0.1",
        PROXY,
        "--capture",
        "cap_proxy",
        "--server",
        "everything",
        "--root",
        dir.path,
        "--",
        upstream.command,
        ...upstream.args,
      ],
      stderr: "pipe",
    });
    // The proxy's stderr (and its upstream's, which inherits it) ends when
    // both are gone: the condition to wait on before reading the store.
    const stderr = (async () => {
      let text = "";
      for await (const chunk of transport.stderr!) text += chunk;
      return text;
    })();
    const client = new Client({ name: "test", version: "0" });
    await client.connect(transport);
    const listed = (await client.listTools()).tools;
    assertEquals(listed.length, direct.length);
    for (const t of direct) {
      const mine = listed.find((x: { name: string }) =>
        x.name === `everything__${t.name}`
      );
      assertOk(mine, `everything__${t.name} missing`);
      assertEquals(mine.inputSchema, t.input_schema);
      assertEquals(mine.outputSchema ?? null, t.output_schema);
    }
    const sum = await client.callTool({
      name: "everything__get-sum",
      arguments: { a: 2, b: 3 },
    });
    assertEquals(sum.content, [{
      type: "text",
      text: "The sum of 2 and 3 is 5.",
    }]);
    const structured = await client.callTool({
      name: "everything__get-structured-content",
      arguments: { location: "Chicago" },
    });
    assertEquals(structured.structuredContent, {
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
    const bad = await client.callTool({
      name: "everything__get-structured-content",
      arguments: { location: "Paris" },
    });
    assertEquals(bad.isError, true);
    await client.close();
    // The proxy flushes and exits when its client goes away.
    assertOk(/3 calls recorded/.test(await stderr), await stderr);
    const evs = await events(dir.path, "cap_proxy");
    assertEquals(evs.map((e) => e.kind), [
      "toolset.exposed",
      "tool.call.started",
      "tool.call.completed",
      "tool.call.started",
      "tool.call.completed",
      "tool.call.started",
      "tool.call.failed",
    ]);
    assertEquals(evs[0].episode_id, "ep_proxy");
    assertEquals((evs[0].payload.tools as unknown[]).length, direct.length);
    assertEquals(evs[4].payload.structured_result, {
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
    assertEquals(
      (evs[3].payload.tool as { logical_id: string }).logical_id,
      "mcp:everything/get-structured-content",
    );
    for (const i of [2, 4, 6]) {
      assertEquals(evs[i].parent_event_id, evs[i - 1].event_id);
    }
    assertOk(JSON.stringify(evs[6].payload.result).includes("Invalid option"));
  },
});

Deno.test({
  name: "two upstreams with the same tool names stay apart under namespacing",
  ...opts,
  async fn() {
    await cacheEverything();
    const recorded: unknown[] = [];
    const { server, proxy } = await buildStdioProxyServer(
      [everythingUpstream("alpha"), everythingUpstream("beta")],
      {
        sink: { emit: (e) => recorded.push(e) },
        captureId: "cap_two",
        stderr: "ignore",
      },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(b);
    const names = (await client.listTools()).tools.map((t: { name: string }) =>
      t.name
    );
    assertOk(names.includes("alpha__echo") && names.includes("beta__echo"));
    assertEquals(new Set(names).size, names.length);
    const r = await client.callTool({
      name: "beta__echo",
      arguments: { message: "hi" },
    });
    assertEquals(r.content, [{ type: "text", text: "Echo: hi" }]);
    assertEquals(proxy.calls, 1);
    await client.close();
    await proxy.close();
    assertEquals(namespacedName("my server!", "x"), "my_server___x");
    assertOk(namespacedName("s".repeat(200), "t").length <= 128);
  },
});

Deno.test({
  name:
    "a crashed or hung upstream gives an error result and a failed event; the proxy stays up and restarts it",
  ...opts,
  async fn() {
    const recorded: TraceEvent[] = [];
    const { server, proxy } = await buildStdioProxyServer(
      {
        server: "flaky",
        command: Deno.execPath(),
        args: ["run", "--quiet", "-A", FLAKY],
      },
      {
        sink: { emit: (e) => recorded.push(e as TraceEvent) },
        captureId: "cap_flaky",
        // The hang below waits this out; starting (and restarting) the
        // upstream has a time-out of its own (60 s), so a busy machine
        // slowing a Deno process's start does not fail the test.
        callTimeoutMs: 2000,
        stderr: "ignore",
      },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(b);
    const first = await client.callTool({ name: "flaky__ok", arguments: {} });
    const crashed = await client.callTool({
      name: "flaky__crash",
      arguments: {},
    });
    assertEquals(crashed.isError, true);
    assertOk(
      /exited|closed/.test(JSON.stringify(crashed.content)),
      JSON.stringify(crashed.content),
    );
    const again = await client.callTool({ name: "flaky__ok", arguments: {} });
    assertEquals(again.isError, undefined);
    assertOk(
      JSON.stringify(again.content) !== JSON.stringify(first.content),
      "a new process answered",
    );
    const hung = await client.callTool({ name: "flaky__hang", arguments: {} });
    assertEquals(hung.isError, true);
    assertOk(/did not answer/.test(JSON.stringify(hung.content)));
    const after = await client.callTool({ name: "flaky__ok", arguments: {} });
    assertEquals(after.isError, undefined);
    const kinds = recorded.filter((e) => e.kind !== "toolset.exposed").map((
      e,
    ) => e.kind);
    assertEquals(kinds, [
      "tool.call.started",
      "tool.call.completed",
      "tool.call.started",
      "tool.call.failed",
      "tool.call.started",
      "tool.call.completed",
      "tool.call.started",
      "tool.call.failed",
      "tool.call.started",
      "tool.call.completed",
    ]);
    await client.close();
    await proxy.close();
  },
});

Deno.test({
  name:
    "an upstream slower to start than the call time-out still starts: starting has a time-out of its own",
  ...opts,
  async fn() {
    const recorded: TraceEvent[] = [];
    const { server, proxy } = await buildStdioProxyServer(
      {
        server: "slow",
        command: Deno.execPath(),
        args: ["run", "--quiet", "-A", FLAKY, "--start-delay", "3000"],
      },
      {
        sink: { emit: (e) => recorded.push(e as TraceEvent) },
        captureId: "cap_slow",
        // Shorter than the start (3 s), long enough for the call itself to
        // be answered on a busy machine.
        callTimeoutMs: 2000,
        stderr: "ignore",
      },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(b);
    const ok = await client.callTool({ name: "slow__ok", arguments: {} });
    assertEquals(ok.isError, undefined, JSON.stringify(ok));
    assertEquals(
      recorded.map((e) => e.kind),
      ["toolset.exposed", "tool.call.started", "tool.call.completed"],
    );
    await client.close();
    await proxy.close();
  },
});
