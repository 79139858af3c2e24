/**
 * τ²'s retail tools that change the database, with its checks in its
 * order (so a refused call leaves the same partial state τ²'s would) and
 * its arithmetic (price differences, gift card balances rounded to cents
 * as Python's `round(x, 2)`).
 *
 * @module
 */
import { pyRound2 } from "./_py.ts";
import {
  countOf,
  getOrder,
  getPaymentMethod,
  getUser,
  getVariant,
  isGiftCard,
  stringList,
} from "./_retail_lookup.ts";
import {
  dumpOrder,
  dumpUser,
  type RetailAddress,
  type RetailDb,
  type RetailOrder,
  type RetailOrderItem,
  type RetailPayment,
  type RetailPaymentMethod,
  type RetailVariant,
} from "./retail_db.ts";
import { RetailToolError } from "./retail_errors.ts";

/** An address from the address arguments. */
function addressOf(a: Record<string, unknown>): RetailAddress {
  return {
    address1: a.address1 as string,
    address2: a.address2 as string,
    city: a.city as string,
    country: a.country as string,
    state: a.state as string,
    zip: a.zip as string,
  };
}

/** Python's `sorted` on a list of strings (code point order). */
function sorted(list: string[]): string[] {
  return [...list].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
}

/** The first line of the order with this item id. */
function findItem(o: RetailOrder, itemId: string): RetailOrderItem | undefined {
  return o.items.find((i) => i.item_id === itemId);
}

/** The order, refused as `Non-<status> order cannot be <done>` unless in it. */
function orderIn(
  db: RetailDb,
  orderId: unknown,
  status: "pending" | "delivered",
  done: string,
): RetailOrder {
  const order = getOrder(db, orderId);
  if (order.status !== status) {
    throw new RetailToolError(`Non-${status} order cannot be ${done}`);
  }
  return order;
}

/**
 * The order, refused unless its status contains `pending` (so
 * `pending (item modified)` passes), as τ²'s address and payment changes
 * check; its item change wants exactly `pending` ({@link orderIn}).
 */
function modifiableOrder(db: RetailDb, orderId: unknown): RetailOrder {
  const order = getOrder(db, orderId);
  if (!order.status.includes("pending")) {
    throw new RetailToolError("Non-pending order cannot be modified");
  }
  return order;
}

/**
 * Refuse a gift card whose balance (none counts as 0) is below `amount`,
 * as `Insufficient gift card balance to pay for <what>`; other methods pass.
 */
function checkGiftCardCovers(
  pm: RetailPaymentMethod,
  amount: number,
  what: string,
): void {
  if (isGiftCard(pm) && (pm.balance ?? 0) < amount) {
    throw new RetailToolError(
      `Insufficient gift card balance to pay for ${what}`,
    );
  }
}

/** Take `amount` off a gift card's balance, rounded to cents. */
function chargeGiftCard(pm: RetailPaymentMethod, amount: number): void {
  if (isGiftCard(pm)) pm.balance = pyRound2((pm.balance ?? 0) - amount);
}

/** Put `amount` back on a gift card's balance, rounded to cents. */
function refundGiftCard(pm: RetailPaymentMethod, amount: number): void {
  if (isGiftCard(pm)) pm.balance = pyRound2((pm.balance ?? 0) + amount);
}

/** `cancel_pending_order`: refund every payment, gift cards at once. */
export function cancelPendingOrder(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  const order = orderIn(db, a.order_id, "pending", "cancelled");
  if (a.reason !== "no longer needed" && a.reason !== "ordered by mistake") {
    throw new RetailToolError("Invalid reason");
  }
  const refunds: RetailPayment[] = [];
  for (const payment of order.payment_history) {
    refunds.push({
      transaction_type: "refund",
      amount: payment.amount,
      payment_method_id: payment.payment_method_id,
    });
    const user = getUser(db, order.user_id);
    const pm = getPaymentMethod(db, {
      userId: user.user_id,
      paymentMethodId: payment.payment_method_id,
    });
    refundGiftCard(pm, payment.amount);
  }
  order.status = "cancelled";
  order.cancel_reason = a.reason;
  order.payment_history.push(...refunds);
  return dumpOrder(order);
}

/** Check each listed item occurs in the order at least as often. */
function checkCounts(
  order: RetailOrder,
  itemIds: string[],
  message: (id: string) => string,
): void {
  const all = order.items.map((i) => i.item_id);
  for (const id of itemIds) {
    if (countOf(itemIds, id) > countOf(all, id)) {
      throw new RetailToolError(message(id));
    }
  }
}

/** The variant a line is changed to, checked available. */
function newVariant(
  db: RetailDb,
  order: RetailOrder,
  itemId: string,
  newItemId: string,
): { item: RetailOrderItem; variant: RetailVariant } {
  const item = findItem(order, itemId);
  if (!item) throw new RetailToolError(`Item ${itemId} not found`);
  const variant = getVariant(db, {
    productId: item.product_id,
    variantId: newItemId,
  });
  if (!variant.available) {
    throw new RetailToolError(`New item ${newItemId} not found or available`);
  }
  return { item, variant };
}

/** `exchange_delivered_order_items`: record the exchange request. */
export function exchangeDeliveredOrderItems(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  const order = orderIn(db, a.order_id, "delivered", "exchanged");
  const itemIds = stringList(a.item_ids, "item_ids");
  const newItemIds = stringList(a.new_item_ids, "new_item_ids");
  checkCounts(order, itemIds, (id) => `Number of ${id} not found.`);
  if (itemIds.length !== newItemIds.length) {
    throw new RetailToolError(
      "The number of items to be exchanged should match.",
    );
  }
  let diff = 0;
  for (let k = 0; k < itemIds.length; k++) {
    const { item, variant } = newVariant(db, order, itemIds[k], newItemIds[k]);
    diff += variant.price - item.price;
  }
  diff = pyRound2(diff);
  const pm = getPaymentMethod(db, {
    userId: order.user_id,
    paymentMethodId: a.payment_method_id,
  });
  checkGiftCardCovers(pm, diff, "the price difference");
  order.status = "exchange requested";
  order.exchange_items = sorted(itemIds);
  order.exchange_new_items = sorted(newItemIds);
  order.exchange_payment_method_id = a.payment_method_id as string;
  order.exchange_price_difference = diff;
  return dumpOrder(order);
}

/** `modify_pending_order_address`. */
export function modifyPendingOrderAddress(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  const order = modifiableOrder(db, a.order_id);
  order.address = addressOf(a);
  return dumpOrder(order);
}

/**
 * `modify_pending_order_items`. As in τ², every changed line takes the
 * price and options of the LAST new variant checked, and the price
 * difference recorded in the payment history is not rounded.
 */
export function modifyPendingOrderItems(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  const order = orderIn(db, a.order_id, "pending", "modified");
  const itemIds = stringList(a.item_ids, "item_ids");
  const newItemIds = stringList(a.new_item_ids, "new_item_ids");
  checkCounts(order, itemIds, (id) => `${id} not found`);
  if (itemIds.length !== newItemIds.length) {
    throw new RetailToolError(
      "The number of items to be exchanged should match",
    );
  }
  let diff = 0;
  let last: RetailVariant | undefined;
  for (let k = 0; k < itemIds.length; k++) {
    if (itemIds[k] === newItemIds[k]) {
      throw new RetailToolError(
        "The new item id should be different from the old item id",
      );
    }
    const { item, variant } = newVariant(db, order, itemIds[k], newItemIds[k]);
    diff += variant.price - item.price;
    last = variant;
  }
  const pm = getPaymentMethod(db, {
    userId: order.user_id,
    paymentMethodId: a.payment_method_id,
  });
  checkGiftCardCovers(pm, diff, "the new item");
  order.payment_history.push({
    transaction_type: diff > 0 ? "payment" : "refund",
    amount: Math.abs(diff),
    payment_method_id: a.payment_method_id as string,
  });
  chargeGiftCard(pm, diff);
  for (let k = 0; k < itemIds.length; k++) {
    const item = findItem(order, itemIds[k]);
    if (!item) throw new RetailToolError(`Item ${itemIds[k]} not found`);
    item.item_id = newItemIds[k];
    item.price = last!.price;
    item.options = { ...last!.options };
  }
  order.status = "pending (item modified)";
  return dumpOrder(order);
}

/** `modify_pending_order_payment`: pay with another method, refund the old. */
export function modifyPendingOrderPayment(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  const order = modifiableOrder(db, a.order_id);
  const pm = getPaymentMethod(db, {
    userId: order.user_id,
    paymentMethodId: a.payment_method_id,
  });
  const history = order.payment_history;
  if (history.length !== 1 || history[0].transaction_type !== "payment") {
    throw new RetailToolError(
      "There should be exactly one payment for a pending order",
    );
  }
  const oldId = history[0].payment_method_id;
  if (oldId === a.payment_method_id) {
    throw new RetailToolError(
      "The new payment method should be different from the current one",
    );
  }
  const amount = history[0].amount;
  checkGiftCardCovers(pm, amount, "the order");
  history.push(
    {
      transaction_type: "payment",
      amount,
      payment_method_id: a.payment_method_id as string,
    },
    { transaction_type: "refund", amount, payment_method_id: oldId },
  );
  chargeGiftCard(pm, amount);
  refundGiftCard(
    getPaymentMethod(db, { userId: order.user_id, paymentMethodId: oldId }),
    amount,
  );
  return dumpOrder(order);
}

/** `modify_user_address`: the user's default address. */
export function modifyUserAddress(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  const user = getUser(db, a.user_id);
  user.address = addressOf(a);
  return dumpUser(user);
}

/** `return_delivered_order_items`: record the return request. */
export function returnDeliveredOrderItems(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  const order = orderIn(db, a.order_id, "delivered", "returned");
  const user = getUser(db, order.user_id);
  const pm = getPaymentMethod(db, {
    userId: user.user_id,
    paymentMethodId: a.payment_method_id,
  });
  if (
    !isGiftCard(pm) &&
    a.payment_method_id !== order.payment_history[0]?.payment_method_id
  ) {
    throw new RetailToolError(
      "Payment method should be the original payment method",
    );
  }
  const itemIds = stringList(a.item_ids, "item_ids");
  checkCounts(order, itemIds, () => "Some item not found");
  order.status = "return requested";
  order.return_items = sorted(itemIds);
  order.return_payment_method_id = a.payment_method_id as string;
  return dumpOrder(order);
}
