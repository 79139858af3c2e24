/**
 * The τ² retail environment: the state changes and messages of each write
 * tool.
 *
 * @module
 */
import { assertEquals, assertNotEquals } from "../_assert.ts";
import { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { freshDb, refused } from "./_retail.ts";

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
