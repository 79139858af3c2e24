/**
 * An MCP server of a small notes store whose tools declare MCP annotations
 * that their names would not tell: `archive_note` only reads
 * (`readOnlyHint`), `get_and_delete_note` deletes (`destructiveHint`),
 * `tag_note` changes state but destroys nothing, and `plain_tool` declares
 * no hints at all.
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

const notes = new Map([["n1", "buy milk"], ["n2", "call Ana"]]);
const server = new Server({ name: "notes", version: "0" }, {
  capabilities: { tools: {} },
});
const schema = {
  type: "object",
  properties: { id: { type: "string" } },
  required: ["id"],
};
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: "archive_note",
      description: "Show an archived copy of a note",
      inputSchema: schema,
      annotations: { title: "Archived note", readOnlyHint: true },
    },
    {
      name: "get_and_delete_note",
      description: "Return a note and delete it",
      inputSchema: schema,
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    {
      name: "tag_note",
      description: "Add a tag to a note",
      inputSchema: schema,
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    {
      name: "plain_tool",
      description: "Declares nothing",
      inputSchema: schema,
      annotations: { title: "Plain" },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (req: CallToolRequest) => {
  const id = String(req.params.arguments?.id ?? "");
  const text = notes.get(id) ?? "no such note";
  if (req.params.name === "get_and_delete_note") notes.delete(id);
  return { content: [{ type: "text", text }] };
});
await server.connect(new StdioServerTransport());
