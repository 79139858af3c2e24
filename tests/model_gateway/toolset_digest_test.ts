import { assertEquals } from "../_assert.ts";
import { ToolsetDigests } from "../../lib/model_gateway/toolset_digest.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import { sha256Hex } from "../../lib/trace/hash.ts";

const tools = [{
  name: "get_order_details",
  description: "Get an order.",
  input_schema: {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
  },
}];

Deno.test("ToolsetDigests gives the canonical form's digest, met again or in another key order", () => {
  const digests = new ToolsetDigests();
  const want = sha256Hex(canonicalJson(tools));
  assertEquals(digests.digest(tools), want);
  // Met again (remembered by its plain text), and as a new value.
  assertEquals(digests.digest(tools), want);
  assertEquals(digests.digest(structuredClone(tools)), want);
  // The same tools with their keys in another order: the same toolset.
  const reordered = [{
    input_schema: {
      required: ["order_id"],
      properties: { order_id: { type: "string" } },
      type: "object",
    },
    description: "Get an order.",
    name: "get_order_details",
  }];
  assertEquals(digests.digest(reordered), want);
  // Another toolset: another digest, past the memory's bound too.
  for (let i = 0; i < 40; i++) {
    const other = [{ ...tools[0], name: `tool_${i}` }];
    assertEquals(digests.digest(other), sha256Hex(canonicalJson(other)));
  }
  assertEquals(digests.digest(tools), want);
});
