/**
 * `ingest.ts mcp` ends the way MCP's stdio shutdown asks: when the host
 * closes its stdin it exits 0 and releases the store (it is not held open).
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { tempDir } from "../_helpers.ts";
import { hangGuard } from "../_wait.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

/** Start `ingest.ts mcp` on a store, with stdin and stdout piped. */
function startMcp(root: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      `--allow-write=${root}`,
      "--allow-env",
      "--allow-net=127.0.0.1",
      INGEST,
      "mcp",
      "--root",
      root,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Read lines from a stream until one holds `"id":<id>`. */
async function answer(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  id: number,
): Promise<Record<string, unknown>> {
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error("ingest.ts mcp closed its stdout");
    buffered += decoder.decode(value, { stream: true });
    for (const line of buffered.split("\n").slice(0, -1)) {
      const m = JSON.parse(line);
      if (m.id === id) return m;
    }
    buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
  }
}

/** The exit code; a child that never exits is killed by the guard (137). */
async function exitCode(child: Deno.ChildProcess): Promise<number> {
  using _guard = hangGuard(child);
  return (await child.status).code;
}

Deno.test({
  name:
    "ingest.ts mcp exits 0 when its host closes stdin (not held open), and releases the store",
  async fn() {
    await using dir = await tempDir();
    const child = startMcp(dir.path);
    const stderr = new Response(child.stderr).text();
    const writer = child.stdin.getWriter();
    const reader = child.stdout.getReader();
    const line = (m: unknown) =>
      writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
    try {
      await line({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "eof-test", version: "0" },
        },
      });
      assertOk((await answer(reader, 1)).result);
      await line({ jsonrpc: "2.0", method: "notifications/initialized" });
      await line({ jsonrpc: "2.0", id: 2, method: "tools/list" });
      assertOk((await answer(reader, 2)).result);
      await writer.close();
      const code = await exitCode(child);
      const said = await stderr;
      assertOk(!said.includes("Top-level await"), said);
      assertEquals(code, 0, said);
      new HarnessStore(dir.path).close(); // a new writer opens the store
    } finally {
      await writer.close().catch(() => {});
      await reader.cancel().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status;
      await stderr.catch(() => {});
    }
  },
});

Deno.test({
  name: "ingest.ts mcp exits 0 on SIGTERM and releases the store",
  async fn() {
    await using dir = await tempDir();
    const child = startMcp(dir.path);
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.getReader();
    try {
      // Wait until it serves (it says so on stderr after connecting).
      const writer = child.stdin.getWriter();
      await writer.write(
        new TextEncoder().encode(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-06-18",
              capabilities: {},
              clientInfo: { name: "eof-test", version: "0" },
            },
          }) + "\n",
        ),
      );
      assertOk((await answer(reader, 1)).result);
      writer.releaseLock();
      child.kill("SIGTERM");
      assertEquals(await exitCode(child), 0, await stderr);
      new HarnessStore(dir.path).close();
    } finally {
      await child.stdin.close().catch(() => {});
      await reader.cancel().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status;
      await stderr.catch(() => {});
    }
  },
});
