/**
 * A gateway capture (model requests and answers, tool calls linked) is
 * graded F2, as the contract's levels say (F4 is state plus decision
 * context), and `capture inspect` says why: the legend used to read "F4 +
 * model requests and answers", so a user with model requests and answers
 * expected F4 (issue 48, item 6).
 *
 * @module
 */
import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { startGateway } from "../model_gateway/_gateway.ts";

Deno.test("capture inspect of a gateway capture: F2, and the legend and a note say F3 and F4 need state", async () => {
  await using rig = await startGateway({ capture: "gw_fidelity" });
  rig.up.push(
    { toolCalls: [{ name: "get_order", arguments: { id: "#W1234" } }] },
    { text: "Order #W1234 is pending." },
  );
  const client = rig.openai();
  const tools = [{
    type: "function" as const,
    function: {
      name: "get_order",
      parameters: { type: "object", properties: { id: { type: "string" } } },
    },
  }];
  const first = await client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "Where is order #W1234?" }],
    tools,
  });
  const call = first.choices[0].message.tool_calls![0];
  await client.chat.completions.create({
    model: "m",
    messages: [
      { role: "user", content: "Where is order #W1234?" },
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: '{"status":"pending"}' },
    ],
    tools,
  });
  const events = await rig.events();
  assertOk(events.some((e) => e.kind === "tool.call.completed"));
  const text = await runMain(
    ["capture", "inspect", "gw_fidelity", "--root", rig.server.root],
  );
  assertEquals(text.code, 0, text.err);
  assertMatch(
    text.out,
    /fidelity +F2 \(model requests and answers are recorded; F3 and F4 need state snapshots or deltas, which this capture has not\)/,
  );
  assertOk(!text.out.includes("F4 + model requests"), text.out);
  assertMatch(
    text.out,
    /\nfidelity: .*F4 state plus model requests and answers \(model requests and answers without state do not raise the level\)/,
  );
});
