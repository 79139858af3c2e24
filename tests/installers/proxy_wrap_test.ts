import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { main } from "../../ingest.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { wrapServerEntry } from "../../lib/installers/mcp_wrap.ts";
import { cacheEverything, EVERYTHING } from "../proxy/_upstreams.ts";
import { tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

const quiet = { out: () => {}, err: () => {} };

Deno.test({
  name:
    "install --proxy puts the recording proxy in front of a host's MCP server, which then records every call; uninstall restores it byte for byte",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await cacheEverything();
    await using dir = await tempDir();
    const settings = join(dir.path, ".gemini", "settings.json");
    Deno.mkdirSync(join(dir.path, ".gemini"));
    const original = JSON.stringify(
      {
        theme: "dark",
        mcpServers: {
          everything: {
            command: Deno.execPath(),
            args: ["run", "--quiet", "-A", EVERYTHING, "stdio"],
            env: { A: "1" },
          },
        },
      },
      null,
      4,
    );
    Deno.writeTextFileSync(settings, original);
    const root = join(dir.path, "store");
    const code = await main([
      "install",
      "host_b",
      "--proxy",
      "everything",
      "--project",
      dir.path,
      "--root",
      root,
      "--capture",
      "cap_wrapped",
    ], quiet);
    assertEquals(code, 0);
    const wrapped =
      JSON.parse(Deno.readTextFileSync(settings)).mcpServers.everything;
    assertEquals(wrapped.env, { A: "1" });
    assertOk(wrapped.args.some((a: string) => a.endsWith("proxy.ts")));
    // Run the entry exactly as the host would.
    const client = new Client({ name: "host_b", version: "0" });
    await client.connect(
      new StdioClientTransport({
        command: wrapped.command,
        args: wrapped.args,
        stderr: "ignore",
      }),
    );
    const names = (await client.listTools()).tools.map((t: { name: string }) =>
      t.name
    );
    assertOk(names.includes("everything__get-sum"), names.join(","));
    const r = await client.callTool({
      name: "everything__get-sum",
      arguments: { a: 40, b: 2 },
    });
    assertEquals(r.content, [{
      type: "text",
      text: "The sum of 40 and 2 is 42.",
    }]);
    await client.close();
    // The proxy lets go of the store once its client is gone.
    const events = await waitFor("the proxy to release the store", () => {
      try {
        using store = new HarnessStore(root);
        return store.getCapture("cap_wrapped")?.event_count ?? 0;
      } catch {
        return 0; // the proxy still holds the store
      }
    });
    assertEquals(events, 3); // toolset.exposed, started, completed
    assertEquals(
      await main([
        "uninstall",
        "host_b",
        "--proxy",
        "everything",
        "--project",
        dir.path,
        "--root",
        root,
      ], quiet),
      0,
    );
    assertEquals(Deno.readTextFileSync(settings), original);
  },
});

Deno.test("wrapServerEntry() handles host_c's command arrays and refuses remote or already wrapped servers", () => {
  const proxy = {
    command: "/bin/deno",
    args: ["run", "/x/proxy.ts", "--server", "fs", "--"],
  };
  const cfg = {
    mcp: {
      fs: {
        type: "local",
        command: ["npx", "-y", "fs-server"],
        environment: { K: "v" },
      },
      web: { type: "remote", url: "https://x" },
    },
  };
  const { config, original } = wrapServerEntry(cfg, {
    host: "host_c",
    name: "fs",
    proxy,
  });
  assertEquals(
    (config.mcp as Record<string, { command: string[] }>).fs.command,
    [
      "/bin/deno",
      "run",
      "/x/proxy.ts",
      "--server",
      "fs",
      "--",
      "npx",
      "-y",
      "fs-server",
    ],
  );
  assertEquals(original, cfg.mcp.fs);
  assertThrows(
    () => wrapServerEntry(config, { host: "host_c", name: "fs", proxy }),
    /already behind/,
  );
  assertThrows(
    () => wrapServerEntry(cfg, { host: "host_c", name: "web", proxy }),
    /not a local command/,
  );
  assertThrows(
    () =>
      wrapServerEntry({ mcpServers: {} }, {
        host: "host_a",
        name: "nope",
        proxy,
      }),
    /No MCP server "nope"/,
  );
});
