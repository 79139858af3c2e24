import { assertEquals, assertOk } from "../_assert.ts";
import { unseenToolSchema } from "../../lib/forms/agent/tool_schemas.ts";
import type { ChoiceTool } from "../../lib/forms/agent/agent_nodes.ts";

const tools: ChoiceTool[] = [{
  tool: "cancel_pending_order",
  effect: "destructive",
  args: [
    {
      path: "order_id",
      sources: [{
        from: "result",
        tool: "get_user_details",
        path: ["orders", "[*]"],
      }],
    },
    { path: "reason", sources: [{ from: "user_text" }] },
  ],
}];

const schema = (required: string[]) => ({
  name: "modify_pending_order_payment",
  description: "Change the payment method of a pending order.",
  parameters: {
    type: "object",
    properties: {
      order_id: { type: "string" },
      payment_method_id: { type: "string" },
    },
    required,
  },
});

Deno.test("an unseen tool is offered with each argument narrowed by name, or not at all when a destructive one has a required argument no tool has", () => {
  const candidates = {
    cancel_pending_order: {
      order_id: ["#W10", "#W11"],
      reason: "text the user wrote",
    },
  };
  // payment_method_id is required and no choice tool has it: a destructive
  // tool could never pass the check, so it is not offered.
  assertEquals(
    unseenToolSchema(schema(["order_id", "payment_method_id"]), {
      effect: "destructive",
      tools,
      candidates,
    }),
    null,
  );
  // Optional there: offered, order_id narrowed to the same-named candidates.
  const optional = unseenToolSchema(schema(["order_id"]), {
    effect: "destructive",
    tools,
    candidates,
  });
  assertOk(optional);
  const props = optional.parameters.properties as Record<
    string,
    { enum?: unknown[] }
  >;
  assertEquals(props.order_id.enum, ["#W10", "#W11"]);
  assertEquals(props.payment_method_id.enum, undefined);
  // A write tool is offered with the unknown argument free.
  assertOk(
    unseenToolSchema(schema(["order_id", "payment_method_id"]), {
      effect: "write",
      tools,
      candidates,
    }),
  );
  // A destructive tool with no argument any learned tool has: never offered.
  assertEquals(
    unseenToolSchema({
      name: "wipe_account",
      parameters: { type: "object", properties: {} },
    }, { effect: "destructive", tools, candidates }),
    null,
  );
  // No candidate yet for order_id: not offered now.
  assertEquals(
    unseenToolSchema(schema(["order_id"]), {
      effect: "write",
      tools,
      candidates: {
        cancel_pending_order: { order_id: [], reason: "text the user wrote" },
      },
    }),
    null,
  );
});
