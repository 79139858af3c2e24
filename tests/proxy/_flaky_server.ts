/**
 * An MCP server whose tools misbehave on purpose: `ok` answers, `crash`
 * kills the process, `hang` never answers.
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

const server = new Server({ name: "flaky", version: "0" }, {
  capabilities: { tools: {} },
});
const schema = { type: "object", properties: {} };
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: "ok", description: "answers", inputSchema: schema },
    { name: "crash", description: "exits", inputSchema: schema },
    { name: "hang", description: "never answers", inputSchema: schema },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (req: CallToolRequest) => {
  if (req.params.name === "crash") Deno.exit(3);
  if (req.params.name === "hang") return new Promise(() => {});
  return { content: [{ type: "text", text: `ok from ${Deno.pid}` }] };
});
// `--start-delay MS`: a server that takes that long before it answers
// anything (as one run through npx does while it downloads).
const delay = Deno.args.indexOf("--start-delay");
if (delay >= 0) {
  await new Promise((r) => setTimeout(r, Number(Deno.args[delay + 1])));
}
await server.connect(new StdioServerTransport());
