/**
 * An MCP server that misbehaves on purpose, for the proxy's hostile-input
 * tests: `count` keeps state (a counter) and names its process, `big`
 * answers a text of `bytes` bytes, `garbage` prints a line that is not
 * JSON on stdout and never answers, `noisy` prints that line (a stray log
 * line) and answers in a write of its own right after (well inside the
 * proxy's second of quiet that makes such a line a refusal). Started with `--garbage-only`, it
 * answers every line it reads with that same non-JSON line (an upstream
 * that is not an MCP server at all).
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The line the server prints instead of an answer. */
export const GARBAGE = "Traceback (most recent call last): this is not JSON";

if (import.meta.main) {
  const out = new TextEncoder().encode(GARBAGE + "\n");
  if (Deno.args.includes("--garbage-only")) {
    for await (const chunk of Deno.stdin.readable) {
      for (const b of chunk) if (b === 10) Deno.stdout.writeSync(out);
    }
  } else {
    let count = 0;
    const server = new Server({ name: "hostile", version: "0" }, {
      capabilities: { tools: {} },
    });
    const schema = { type: "object", properties: {} };
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: "count", description: "counts calls", inputSchema: schema },
        { name: "big", description: "answers `bytes`", inputSchema: schema },
        { name: "garbage", description: "prints junk", inputSchema: schema },
        { name: "noisy", description: "logs, answers", inputSchema: schema },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, (req: CallToolRequest) => {
      const name = req.params.name;
      if (name === "garbage") {
        Deno.stdout.writeSync(out);
        return new Promise(() => {});
      }
      if (name === "noisy") {
        Deno.stdout.writeSync(out);
        return new Promise((resolve) =>
          setTimeout(
            () => resolve({ content: [{ type: "text", text: "fine" }] }),
            0,
          )
        );
      }
      if (name === "big") {
        const bytes = Number(req.params.arguments?.bytes ?? 0);
        return { content: [{ type: "text", text: "x".repeat(bytes) }] };
      }
      count++;
      return {
        content: [{ type: "text", text: `count=${count} pid=${Deno.pid}` }],
      };
    });
    await server.connect(new StdioServerTransport());
  }
}
