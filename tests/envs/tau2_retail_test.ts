/**
 * The τ² retail environment: replay of the vendored conversations, the
 * state changes and messages of each write tool, τ²'s DB rule and the
 * capabilities module.
 *
 * @module
 */
import {
  assertEquals,
  assertNotEquals,
  assertOk,
  assertThrows,
} from "../_assert.ts";
import {
  replayCheck,
  RETAIL_TOOL_SCHEMAS,
  type RetailDb,
  RetailEnv,
  RetailToolError,
  taskSolved,
} from "../../lib/envs/tau2/mod.ts";
import { createCapabilities } from "../../examples/tau2/retail_capabilities.ts";

const FIX = new URL("../../fixtures/", import.meta.url);
const dbText = Deno.readTextFileSync(new URL("tau2_retail_db.json", FIX));
const slicePath = new URL("tau2_retail_slice.json", FIX).pathname;
const slice = JSON.parse(Deno.readTextFileSync(slicePath));
const match = JSON.parse(
  Deno.readTextFileSync(new URL("tau2_retail_slice_task_match.json", FIX)),
);
const freshDb = (): RetailDb => JSON.parse(dbText);

/** A call that τ² refuses with exactly this message. */
function refused(fn: () => unknown, message: string): void {
  const err = assertThrows(fn, RetailToolError);
  assertEquals(err.message, message);
}

Deno.test("replayCheck() reproduces the vendored slice's tool results and solves its tasks", () => {
  const r = replayCheck(slice, match, freshDb());
  assertEquals(r.episodes, 27);
  assertOk(r.calls >= 200, `only ${r.calls} calls`);
  assertOk(
    r.reproduced_calls / r.calls >= 0.95,
    `${r.reproduced_calls}/${r.calls}: ${JSON.stringify(r.mismatches[0])}`,
  );
  assertEquals(r.mismatches.length, r.calls - r.reproduced_calls);
  // Simulation 3 is matched to task 12, but its customer's task 14 is the
  // one it ran (τ² gave it reward 1): the match file's known ambiguity.
  assertEquals(r.unsolved.map((u) => u.simulation), [3]);
  assertEquals(r.solved, r.episodes - 1);
});

Deno.test("RetailEnv.content() writes results exactly as τ² recorded them", () => {
  const env = new RetailEnv(freshDb());
  const msgs = slice.simulations[0].messages;
  assertEquals(
    env.content(env.tools.get_user_details({ user_id: "raj_santos_9079" })),
    msgs[7].content,
  );
  assertEquals(
    env.content(env.tools.list_all_product_types({})),
    msgs[9].content,
  );
  assertEquals(
    env.content(new RetailToolError("User not found")),
    "Error: User not found",
  );
});

Deno.test("cancel_pending_order refunds a gift card at once and records the refund", () => {
  const env = new RetailEnv(freshDb());
  const out = env.tools.cancel_pending_order({
    order_id: "#W3614011",
    reason: "no longer needed",
  }) as Record<string, unknown>;
  const order = env.db.orders["#W3614011"];
  assertEquals(order.status, "cancelled");
  assertEquals(order.cancel_reason, "no longer needed");
  assertEquals(order.payment_history, [
    {
      transaction_type: "payment",
      amount: 1271.94,
      payment_method_id: "gift_card_8541487",
    },
    {
      transaction_type: "refund",
      amount: 1271.94,
      payment_method_id: "gift_card_8541487",
    },
  ]);
  assertEquals(
    env.db.users.emma_smith_8564.payment_methods.gift_card_8541487.balance,
    1333.94,
  );
  assertEquals(out.status, "cancelled");
  assertEquals(out.exchange_items, null);
  refused(
    () =>
      env.tools.cancel_pending_order({
        order_id: "#W3614011",
        reason: "no longer needed",
      }),
    "Non-pending order cannot be cancelled",
  );
  refused(
    () =>
      env.tools.cancel_pending_order({
        order_id: "#W2417020",
        reason: "too slow",
      }),
    "Invalid reason",
  );
  refused(
    () =>
      env.tools.cancel_pending_order({
        order_id: "#W0000000",
        reason: "no longer needed",
      }),
    "Order not found",
  );
});

Deno.test("modify_pending_order_payment moves the payment and both gift card balances", () => {
  const env = new RetailEnv(freshDb());
  refused(
    () =>
      env.tools.modify_pending_order_payment({
        order_id: "#W5166363",
        payment_method_id: "gift_card_8049813",
      }),
    "Insufficient gift card balance to pay for the order",
  );
  refused(
    () =>
      env.tools.modify_pending_order_payment({
        order_id: "#W5166363",
        payment_method_id: "paypal_5914760",
      }),
    "The new payment method should be different from the current one",
  );
  env.tools.modify_pending_order_payment({
    order_id: "#W3414433",
    payment_method_id: "credit_card_4466831",
  });
  assertEquals(env.db.orders["#W3414433"].payment_history, [
    {
      transaction_type: "payment",
      amount: 3227.98,
      payment_method_id: "gift_card_8049813",
    },
    {
      transaction_type: "payment",
      amount: 3227.98,
      payment_method_id: "credit_card_4466831",
    },
    {
      transaction_type: "refund",
      amount: 3227.98,
      payment_method_id: "gift_card_8049813",
    },
  ]);
  assertEquals(
    env.db.users.lei_li_6575.payment_methods.gift_card_8049813.balance,
    3277.98,
  );
  assertEquals(env.db.orders["#W3414433"].status, "pending");
  refused(
    () =>
      env.tools.modify_pending_order_payment({
        order_id: "#W3414433",
        payment_method_id: "paypal_5914760",
      }),
    "There should be exactly one payment for a pending order",
  );
});

Deno.test("modify_pending_order_items charges the difference to a gift card and changes the line", () => {
  const env = new RetailEnv(freshDb());
  refused(
    () =>
      env.tools.modify_pending_order_items({
        order_id: "#W3189752",
        item_ids: ["0000000000"],
        new_item_ids: ["6974536207"],
        payment_method_id: "gift_card_8049813",
      }),
    "0000000000 not found",
  );
  refused(
    () =>
      env.tools.modify_pending_order_items({
        order_id: "#W3189752",
        item_ids: ["6777246137"],
        new_item_ids: ["6777246137"],
        payment_method_id: "gift_card_8049813",
      }),
    "The new item id should be different from the old item id",
  );
  refused(
    () =>
      env.tools.modify_pending_order_items({
        order_id: "#W3189752",
        item_ids: ["6777246137"],
        new_item_ids: ["1434748144"],
        payment_method_id: "gift_card_8049813",
      }),
    "New item 1434748144 not found or available",
  );
  env.tools.modify_pending_order_items({
    order_id: "#W3189752",
    item_ids: ["6777246137"],
    new_item_ids: ["6974536207"],
    payment_method_id: "gift_card_8049813",
  });
  const order = env.db.orders["#W3189752"];
  const diff = 49.3 - 47.76; // τ² records the unrounded difference
  assertEquals(order.payment_history[1], {
    transaction_type: "payment",
    amount: diff,
    payment_method_id: "gift_card_8049813",
  });
  assertEquals(
    env.db.users.lei_li_6575.payment_methods.gift_card_8049813.balance,
    48.46,
  );
  const line = order.items.find((i) => i.product_id === "8310926033")!;
  assertEquals([line.item_id, line.price], ["6974536207", 49.3]);
  assertEquals(
    line.options,
    env.db.products["8310926033"].variants["6974536207"].options,
  );
  assertEquals(order.status, "pending (item modified)");
  refused(
    () =>
      env.tools.modify_pending_order_items({
        order_id: "#W3189752",
        item_ids: ["5268233322"],
        new_item_ids: ["1234567890"],
        payment_method_id: "gift_card_8049813",
      }),
    "Non-pending order cannot be modified",
  );
});

Deno.test("modify_pending_order_items gives every changed line the last new variant's price and options, as τ² does", () => {
  const env = new RetailEnv(freshDb());
  env.tools.modify_pending_order_items({
    order_id: "#W3189752",
    item_ids: ["6777246137", "5268233322"],
    new_item_ids: ["6974536207", "2243454707"],
    payment_method_id: "paypal_5914760",
  });
  const order = env.db.orders["#W3189752"];
  const kettle = env.db.products["1075968781"].variants["2243454707"];
  const changed = order.items.filter((i) =>
    i.item_id === "6974536207" || i.item_id === "2243454707"
  );
  assertEquals(changed.map((i) => [i.item_id, i.price, i.options]), [
    ["2243454707", kettle.price, kettle.options],
    ["6974536207", kettle.price, kettle.options],
  ]);
  assertEquals(order.payment_history[1], {
    transaction_type: "payment",
    amount: 0 + (49.3 - 47.76) + (164.46 - 155.99),
    payment_method_id: "paypal_5914760",
  });
});

Deno.test("exchange_delivered_order_items records the exchange and checks the gift card", () => {
  const env = new RetailEnv(freshDb());
  refused(
    () =>
      env.tools.exchange_delivered_order_items({
        order_id: "#W5605613",
        item_ids: ["7195021808"],
        new_item_ids: ["9644439410"],
        payment_method_id: "gift_card_8541487",
      }),
    "Insufficient gift card balance to pay for the price difference",
  );
  refused(
    () =>
      env.tools.exchange_delivered_order_items({
        order_id: "#W2417020",
        item_ids: ["8997785118"],
        new_item_ids: ["8997785118"],
        payment_method_id: "gift_card_8541487",
      }),
    "Non-delivered order cannot be exchanged",
  );
  refused(
    () =>
      env.tools.exchange_delivered_order_items({
        order_id: "#W5605613",
        item_ids: ["7195021808"],
        new_item_ids: ["0000000000"],
        payment_method_id: "gift_card_8541487",
      }),
    "Variant not found",
  );
  env.tools.exchange_delivered_order_items({
    order_id: "#W5605613",
    item_ids: ["7195021808"],
    new_item_ids: ["4326528037"],
    payment_method_id: "gift_card_8541487",
  });
  const order = env.db.orders["#W5605613"];
  assertEquals(order.status, "exchange requested");
  assertEquals(order.exchange_items, ["7195021808"]);
  assertEquals(order.exchange_new_items, ["4326528037"]);
  assertEquals(order.exchange_payment_method_id, "gift_card_8541487");
  assertEquals(order.exchange_price_difference, -195.36);
  assertEquals(order.items[0].item_id, "7195021808");
  assertEquals(
    env.db.users.emma_smith_8564.payment_methods.gift_card_8541487.balance,
    62,
  );
});

Deno.test("return_delivered_order_items takes the original method or a gift card only", () => {
  const env = new RetailEnv(freshDb());
  refused(
    () =>
      env.tools.return_delivered_order_items({
        order_id: "#W6289770",
        item_ids: ["8098621301"],
        payment_method_id: "paypal_5914760",
      }),
    "Payment method should be the original payment method",
  );
  refused(
    () =>
      env.tools.return_delivered_order_items({
        order_id: "#W6289770",
        item_ids: ["8098621301", "8098621301"],
        payment_method_id: "credit_card_4466831",
      }),
    "Some item not found",
  );
  env.tools.return_delivered_order_items({
    order_id: "#W6289770",
    item_ids: ["8964750292", "8098621301"],
    payment_method_id: "gift_card_8049813",
  });
  const order = env.db.orders["#W6289770"];
  assertEquals(order.status, "return requested");
  assertEquals(order.return_items, ["8098621301", "8964750292"]);
  assertEquals(order.return_payment_method_id, "gift_card_8049813");
  assertEquals(order.payment_history.length, 1);
  refused(
    () =>
      env.tools.return_delivered_order_items({
        order_id: "#W6289770",
        item_ids: ["8098621301"],
        payment_method_id: "credit_card_4466831",
      }),
    "Non-delivered order cannot be returned",
  );
});

Deno.test("modify_pending_order_address and modify_user_address replace the address", () => {
  const env = new RetailEnv(freshDb());
  const address = {
    address1: "1 Elm St",
    address2: "",
    city: "Austin",
    state: "TX",
    country: "USA",
    zip: "73301",
  };
  refused(
    () =>
      env.tools.modify_pending_order_address({
        order_id: "#W6289770",
        ...address,
      }),
    "Non-pending order cannot be modified",
  );
  env.tools.modify_pending_order_address({ order_id: "#W5166363", ...address });
  assertEquals(env.db.orders["#W5166363"].address, address);
  assertNotEquals(env.db.users.lei_li_6575.address, address);
  const user = env.tools.modify_user_address({
    user_id: "lei_li_6575",
    ...address,
  }) as Record<string, unknown>;
  assertEquals(env.db.users.lei_li_6575.address, address);
  assertEquals(user.address, address);
  refused(
    () => env.tools.modify_user_address({ user_id: "nobody_1", ...address }),
    "User not found",
  );
});

Deno.test("RetailEnv tools give τ²'s answers and messages for reads and bad calls", () => {
  const env = new RetailEnv(freshDb());
  assertEquals(
    env.tools.find_user_id_by_email({ email: "RAJ.SANTOS4322@example.com" }),
    "raj_santos_9079",
  );
  refused(
    () =>
      env.tools.find_user_id_by_name_zip({
        first_name: "Raj",
        last_name: "Santos",
        zip: "00000",
      }),
    "User not found",
  );
  refused(
    () => env.tools.get_item_details({ item_id: "0000000000" }),
    "Item not found",
  );
  assertEquals(
    (env.tools.get_item_details({ item_id: "6974536207" }) as { price: number })
      .price,
    49.3,
  );
  refused(
    () => env.tools.get_product_details({ product_id: "6974536207" }),
    "Product not found",
  );
  assertEquals(
    env.tools.calculate({ expression: "3131.1 + 4777.75 + 367.38" }),
    "8276.23",
  );
  assertEquals(env.tools.calculate({ expression: "(2 + 2) * 3" }), "12.0");
  refused(
    () => env.tools.calculate({ expression: "2 + x" }),
    "Invalid characters in expression",
  );
  refused(
    () => env.tools.calculate({ expression: "1 / 0" }),
    "division by zero",
  );
  assertEquals(
    env.tools.transfer_to_human_agents({ summary: "help" }),
    "Transfer successful",
  );
  refused(
    () => env.tools.get_order_details({}),
    "RetailTools.get_order_details() missing 1 required positional argument: 'order_id'",
  );
  refused(
    () => env.tools.get_order_details({ order_id: "#W6289770", extra: 1 }),
    "RetailTools.get_order_details() got an unexpected keyword argument 'extra'",
  );
  assertEquals(
    env.respond("no_such_tool", {}),
    "Error: Tool 'no_such_tool' not found.",
  );
  assertEquals(
    RETAIL_TOOL_SCHEMAS.map((s) => s.name).sort(),
    Object.keys(env.tools).sort(),
  );
  const readOnly = RETAIL_TOOL_SCHEMAS.filter((s) => s.read_only).map((s) =>
    s.name
  );
  assertEquals(readOnly, [
    "calculate",
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_item_details",
    "get_order_details",
    "get_product_details",
    "get_user_details",
    "list_all_product_types",
  ]);
});

Deno.test("taskSolved() fails a run that made a wrong write and names the path", () => {
  const initial = freshDb();
  const actions = [{
    name: "cancel_pending_order",
    arguments: { order_id: "#W3614011", reason: "no longer needed" },
  }];
  const right = new RetailEnv(initial);
  right.tools.cancel_pending_order({
    order_id: "#W3614011",
    reason: "no longer needed",
  });
  assertEquals(taskSolved(initial, right.db, actions), { solved: true });
  const wrong = new RetailEnv(initial);
  wrong.tools.cancel_pending_order({
    order_id: "#W3614011",
    reason: "ordered by mistake",
  });
  assertEquals(taskSolved(initial, wrong.db, actions), {
    solved: false,
    diff: '$.orders["#W3614011"].cancel_reason',
  });
  assertEquals(taskSolved(initial, initial, actions).solved, false);
});

Deno.test("RetailEnv never mutates the database it was given", () => {
  const input = freshDb();
  const env = new RetailEnv(input);
  env.tools.cancel_pending_order({
    order_id: "#W3614011",
    reason: "no longer needed",
  });
  env.tools.modify_user_address({
    user_id: "lei_li_6575",
    address1: "a",
    address2: "b",
    city: "c",
    state: "d",
    country: "e",
    zip: "f",
  });
  taskSolved(input, env.db, [{
    name: "modify_pending_order_payment",
    arguments: {
      order_id: "#W3414433",
      payment_method_id: "credit_card_4466831",
    },
  }]);
  assertEquals(JSON.stringify(input), JSON.stringify(JSON.parse(dbText)));
  assertNotEquals(
    env.db.orders["#W3614011"].status,
    input.orders["#W3614011"].status,
  );
});

Deno.test("createCapabilities() with --task judges the run by the DB rule", () => {
  const caps = createCapabilities({
    args: ["--task", "89", "--tasks", slicePath],
  });
  assertEquals(caps.schemas.length, RETAIL_TOOL_SCHEMAS.length);
  assertOk(caps.instructions.length > 0);
  const before = caps.outcome();
  assertEquals(before?.success, false);
  assertOk(before?.diff?.startsWith("$.orders"));
  for (const m of slice.simulations[0].messages) {
    for (const c of m.tool_calls ?? []) {
      const tool = caps.tools[c.name];
      assertEquals(tool.params, "object");
      try {
        tool.call(c.arguments);
      } catch (e) {
        assertOk(e instanceof RetailToolError);
      }
    }
  }
  assertEquals(caps.outcome(), { success: true });
  assertEquals(createCapabilities({ args: [] }).outcome(), null);
  assertThrows(
    () =>
      createCapabilities({ args: ["--task", "no-such", "--tasks", slicePath] }),
    /No task "no-such"/,
  );
});
