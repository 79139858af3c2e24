/**
 * `harness_capture_outcome` beside a running server (issue 42, item 3):
 * the MCP control server reads the store the server writes, so an episode
 * the model gateway answered a moment ago may not be stored yet. The tool
 * waits for the server to record it; an episode it never saw is refused,
 * naming the closest ids, and nothing is written.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assertEquals, assertOk } from "../_assert.ts";
import { startGateway } from "../model_gateway/_gateway.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

Deno.test({
  name:
    "harness_capture_outcome beside a running server: the episode an answer just named is recorded, a typo is refused with the closest id",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using rig = await startGateway({ capture: "cap_mcp_live" });
    const client = new Client({ name: "test", version: "0" });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "--quiet",
          "--allow-read",
          `--allow-write=${rig.server.root}`,
          "--allow-env",
          "--allow-net=127.0.0.1",
          INGEST,
          "mcp",
          "--root",
          rig.server.root,
        ],
        stderr: "ignore",
      }),
    );
    try {
      rig.up.push({ text: "Your order is refunded." });
      const { response } = await rig.openai().chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "refund order 1234" }],
      }).withResponse();
      const episode = response.headers.get("x-harness-episode")!;
      assertOk(episode, "the answer names its episode");
      // At once: the gateway may not have recorded the exchange yet.
      const ok = await client.callTool({
        name: "harness_capture_outcome",
        arguments: {
          capture_id: "cap_mcp_live",
          episode_id: episode,
          success: true,
        },
      });
      assertEquals(ok.isError, undefined, JSON.stringify(ok.content));
      const typo = episode.slice(0, -1) + (episode.endsWith("0") ? "1" : "0");
      const refused = await client.callTool({
        name: "harness_capture_outcome",
        arguments: {
          capture_id: "cap_mcp_live",
          episode_id: typo,
          success: true,
        },
      });
      assertEquals(refused.isError, true);
      assertOk(
        JSON.stringify(refused.content).includes(`closest: ${episode}`),
        JSON.stringify(refused.content),
      );
      const outcomes = (await rig.events()).filter((e) =>
        e.kind === "annotation" && e.payload.type === "episode.outcome"
      ).map((e) => e.episode_id);
      assertEquals(outcomes, [episode]);
    } finally {
      await client.close();
    }
  },
});
