/**
 * `ingest.ts mcp`: the MCP control server on stdin/stdout. stdout carries
 * protocol bytes only. When an ingest server owns the store, writes go
 * through it. It ends (exit 0, the store released) when the host closes
 * stdin, the first step of MCP's stdio shutdown, or on SIGTERM, SIGINT or
 * SIGHUP.
 *
 * @module
 */
import { HarnessStore } from "../store/store.ts";
import { isStoreLocked, readLockOwner } from "../store/lock.ts";
import { HttpTraceSink } from "../tool_gateway/event_sink.ts";
import { StdioTransport } from "../proxy/stdio_transport.ts";
import { onShutdownSignals } from "../proxy/shutdown_signals.ts";
import { buildMcpServer } from "../control/mcp_server.ts";
import type { Io } from "./io.ts";

/**
 * Serve until the host closes stdin or a stop signal comes.
 *
 * @param o `root`: the store root; `token`: bearer token for the ingest
 *   server.
 * @param io Diagnostics (stderr only).
 * @returns Exit code.
 */
export async function serveMcp(
  o: { root: string; token?: string },
  io: Io,
): Promise<number> {
  const { root, token } = o;
  Deno.mkdirSync(root, { recursive: true, mode: 0o700 });
  const url = isStoreLocked(root) ? readLockOwner(root)?.url : undefined;
  const store = url
    ? new HarnessStore(root, { readOnly: true })
    : new HarnessStore(root, { role: "mcp-control" });
  const http = url ? new HttpTraceSink(url, { token }) : null;
  try {
    const { server } = await buildMcpServer(
      store,
      http ? { sinkFor: () => http } : {},
    );
    const transport = new StdioTransport();
    const closed = new Promise<void>((resolve) =>
      server.server.onclose = resolve
    );
    using _signals = onShutdownSignals(() => transport.close());
    await server.connect(transport);
    io.err(
      `harness MCP control server on stdio (store ${root}${
        url ? `, writing through ${url}` : ""
      })`,
    );
    await closed;
    return 0;
  } finally {
    await http?.flush();
    store.close();
  }
}
