/**
 * Proxy benchmark: median latency of one tools/call through the recording
 * proxy against the same client calling the upstream directly, in one run.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type BenchRow, printTable } from "./_table.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
const PROXY = new URL("../proxy.ts", import.meta.url).pathname;

async function latencies(
  transport: StdioClientTransport,
  n: number,
): Promise<number[]> {
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(transport);
  for (let i = 0; i < 50; i++) {
    await client.callTool({
      name: (await names(client))[0],
      arguments: { a: i, b: 1 },
    });
  }
  const tool = (await names(client))[0];
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.callTool({ name: tool, arguments: { a: i, b: 2 } });
    out.push(performance.now() - t0);
  }
  await client.close();
  return out.sort((a, b) => a - b);
}

const toolNames = new WeakMap<Client, string[]>();
async function names(client: Client): Promise<string[]> {
  const cached = toolNames.get(client);
  if (cached) return cached;
  const found: string[] = (await client.listTools()).tools
    .map((t: { name: string }) => t.name)
    .filter((n: string) => n.endsWith("get-sum"));
  toolNames.set(client, found);
  return found;
}

/**
 * Run the proxy benchmark.
 *
 * @param calls Calls per side.
 * @returns The rows printed.
 */
export async function proxyBench(calls = 500): Promise<BenchRow[]> {
  const root = await Deno.makeTempDir({ prefix: "harness_proxy_bench_" });
  const upstream = ["run", "--quiet", "-A", EVERYTHING, "stdio"];
  try {
    const direct = await latencies(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: upstream,
        stderr: "ignore",
      }),
      calls,
    );
    const proxied = await latencies(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "--quiet",
          "--allow-run",
          "--allow-read",
          `--allow-write=${root}`,
          "--allow-env",
          "--allow-net=127.0.0.1",
          PROXY,
          "--capture",
          "bench",
          "--server",
          "everything",
          "--root",
          root,
          "--",
          Deno.execPath(),
          ...upstream,
        ],
        stderr: "ignore",
      }),
      calls,
    );
    const q = (xs: number[], p: number) => xs[Math.floor(p * (xs.length - 1))];
    const added = q(proxied, 0.5) - q(direct, 0.5);
    const rows: BenchRow[] = [
      {
        name: `direct call, median (${calls} calls)`,
        value: `${q(direct, 0.5).toFixed(3)} ms`,
      },
      {
        name: "through the recording proxy, median",
        value: `${q(proxied, 0.5).toFixed(3)} ms`,
      },
      {
        name: "added median latency per call",
        value: `${added.toFixed(3)} ms`,
        target: "<= 2 ms",
        met: added <= 2 ? "yes" : "no",
      },
      {
        name: "added p99 latency per call",
        value: `${(q(proxied, 0.99) - q(direct, 0.99)).toFixed(3)} ms`,
      },
    ];
    printTable("MCP proxy", rows);
    return rows;
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

if (import.meta.main) await proxyBench();
