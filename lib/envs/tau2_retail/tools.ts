/**
 * `RetailEnv`: the τ²-bench retail tools over a live copy of the database,
 * with τ²'s validation, state changes and error messages. A failing tool
 * throws a {@link RetailToolError} whose message is τ²'s (the tool message
 * is then `Error: <message>`); a successful one returns what τ² returns
 * (a record or a string). Checks run in τ²'s order, so a call that fails
 * part-way leaves the same partial changes τ²'s would.
 *
 * @module
 */
import {
  normalizeAddress,
  normalizeRetailDb,
  type RetailAddress,
  type RetailDb,
  type RetailOrder,
  type RetailPaymentMethod,
  type RetailUser,
  type RetailVariant,
} from "./db.ts";
import { pyJsonDumps, pyRound2 } from "./py_json.ts";
import { calculate } from "./calculate.ts";
import {
  bindArgs,
  pyHas,
  pyList,
  pyLower,
  pySorted,
  pyStr,
  stringFieldsError,
} from "./_py_values.ts";
import { RETAIL_TOOL_PARAMS } from "./schemas.ts";

/** A retail tool: the model's arguments in, τ²'s result out. */
export type RetailTool = (args: Record<string, unknown>) => unknown;

/** A tool call τ² refused or that failed; `message` is τ²'s text. */
export class RetailToolError extends Error {
  /** The tool that failed. */
  readonly tool: string;
  /**
   * @param tool The tool.
   * @param message τ²'s message.
   * @param options The underlying error.
   */
  constructor(tool: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RetailToolError";
    this.tool = tool;
  }
}

const CANCEL_REASONS = ["no longer needed", "ordered by mistake"];
const ADDRESS_FIELDS = [
  "address1",
  "address2",
  "city",
  "state",
  "country",
  "zip",
] as const;

function fail(message: string): never {
  throw new Error(message);
}

function countOf(items: unknown[], x: unknown): number {
  return items.filter((y) => y === x).length;
}

function isGiftCard(
  m: RetailPaymentMethod,
): m is Extract<RetailPaymentMethod, { source: "gift_card" }> {
  return m.source === "gift_card";
}

/**
 * The τ²-bench retail environment over its own copy of a database.
 *
 * @example
 * ```ts
 * import { RetailEnv } from "./tools.ts";
 * const env = new RetailEnv({ products: {}, users: {}, orders: {} });
 * env.content(env.tools.list_all_product_types({})); // "{}"
 * ```
 */
export class RetailEnv {
  #db: RetailDb;
  /** The tools' bodies by name, taking arguments in parameter order. */
  readonly #impl: Record<string, (a: unknown[]) => unknown> = {
    calculate: (a) => this.#calculate(a[0]),
    cancel_pending_order: (a) => this.#cancel_pending_order(a[0], a[1]),
    exchange_delivered_order_items: (a) =>
      this.#exchange_delivered_order_items(a[0], a[1], a[2], a[3]),
    find_user_id_by_name_zip: (a) =>
      this.#find_user_id_by_name_zip(a[0], a[1], a[2]),
    find_user_id_by_email: (a) => this.#find_user_id_by_email(a[0]),
    get_order_details: (a) => this.#get_order_details(a[0]),
    get_product_details: (a) => this.#get_product_details(a[0]),
    get_item_details: (a) => this.#get_item_details(a[0]),
    get_user_details: (a) => this.#get_user_details(a[0]),
    list_all_product_types: () => this.#list_all_product_types(),
    modify_pending_order_address: (a) =>
      this.#modify_pending_order_address(a[0], ...a.slice(1)),
    modify_pending_order_items: (a) =>
      this.#modify_pending_order_items(a[0], a[1], a[2], a[3]),
    modify_pending_order_payment: (a) =>
      this.#modify_pending_order_payment(a[0], a[1]),
    modify_user_address: (a) => this.#modify_user_address(a[0], ...a.slice(1)),
    return_delivered_order_items: (a) =>
      this.#return_delivered_order_items(a[0], a[1], a[2]),
    transfer_to_human_agents: (a) => this.#transfer_to_human_agents(a[0]),
  };
  /** Every retail tool of τ² by name. */
  readonly tools: Record<string, RetailTool>;

  /**
   * @param db A parsed `db.json` (deep-copied and normalized; never changed).
   * @throws {TypeError} The database has the wrong shape.
   */
  constructor(db: unknown) {
    this.#db = normalizeRetailDb(db);
    const tools: Record<string, RetailTool> = {};
    for (const [name, params] of Object.entries(RETAIL_TOOL_PARAMS)) {
      tools[name] = (args) => this.#call(name, params, args ?? {});
    }
    this.tools = tools;
  }

  /** A deep copy of the current database. */
  get db(): RetailDb {
    return JSON.parse(JSON.stringify(this.#db));
  }

  /**
   * The text τ² puts in the tool message for a result: a string as is,
   * a record as Python's `json.dumps` of its model dump.
   *
   * @param result What a tool returned.
   * @returns The tool message content.
   */
  content(result: unknown): string {
    return typeof result === "string" ? result : pyJsonDumps(result);
  }

  /**
   * Call a tool by name and give the tool message τ² would record.
   *
   * @param name The tool.
   * @param args Its arguments.
   * @returns `{ok, content}`: content is `Error: <message>` when it failed.
   */
  invoke(
    name: string,
    args: Record<string, unknown>,
  ): { ok: boolean; content: string } {
    try {
      const tool = this.tools[name];
      if (!tool) throw new RetailToolError(name, `Tool '${name}' not found.`);
      return { ok: true, content: this.content(tool(args)) };
    } catch (e) {
      return { ok: false, content: `Error: ${(e as Error).message}` };
    }
  }

  #call(
    name: string,
    params: readonly string[],
    args: Record<string, unknown>,
  ): unknown {
    try {
      const values = bindArgs(name, params, args);
      return structuredClone(this.#impl[name](values));
    } catch (e) {
      if (e instanceof RetailToolError) throw e;
      throw new RetailToolError(name, (e as Error).message, { cause: e });
    }
  }

  // ---- lookups (τ²'s _get_* helpers) ----

  #order(id: unknown): RetailOrder {
    return pyHas(this.#db.orders, id)
      ? this.#db.orders[id]
      : fail("Order not found");
  }
  #user(id: unknown): RetailUser {
    return pyHas(this.#db.users, id)
      ? this.#db.users[id]
      : fail("User not found");
  }
  #variant(productId: unknown, itemId: unknown): RetailVariant {
    if (!pyHas(this.#db.products, productId)) fail("Product not found");
    const p = this.#db.products[productId];
    return pyHas(p.variants, itemId)
      ? p.variants[itemId]
      : fail("Variant not found");
  }
  #payment(userId: unknown, id: unknown): RetailPaymentMethod {
    const u = this.#user(userId);
    return pyHas(u.payment_methods, id)
      ? u.payment_methods[id]
      : fail("Payment method not found");
  }
  #address(fields: unknown[]): RetailAddress {
    const named = ADDRESS_FIELDS.map((k, i) => [k, fields[i]]) as [
      string,
      unknown,
    ][];
    const err = stringFieldsError(
      "UserAddress",
      // pydantic reports in the model's field order
      ["address1", "address2", "city", "country", "state", "zip"].map((k) =>
        named.find(([n]) => n === k)!
      ),
    );
    if (err) fail(err);
    return normalizeAddress(Object.fromEntries(named), "address");
  }

  // ---- the tools ----

  #calculate(expression: unknown): string {
    return calculate(expression as string);
  }

  #cancel_pending_order(orderId: unknown, reason: unknown): RetailOrder {
    const order = this.#order(orderId);
    if (order.status !== "pending") {
      fail("Non-pending order cannot be cancelled");
    }
    if (reason !== null && typeof reason === "object") {
      fail(`unhashable type: '${Array.isArray(reason) ? "list" : "dict"}'`);
    }
    if (!CANCEL_REASONS.includes(reason as string)) fail("Invalid reason");
    const refunds = [];
    for (const p of order.payment_history) {
      refunds.push({
        transaction_type: "refund" as const,
        amount: p.amount,
        payment_method_id: p.payment_method_id,
      });
      const user = this.#user(order.user_id);
      const method = this.#payment(user.user_id, p.payment_method_id);
      if (isGiftCard(method)) {
        method.balance = pyRound2(method.balance + p.amount);
      }
    }
    order.status = "cancelled";
    order.cancel_reason = reason as string;
    order.payment_history.push(...refunds);
    return order;
  }

  #exchange_delivered_order_items(
    orderId: unknown,
    itemIdsArg: unknown,
    newItemIdsArg: unknown,
    paymentMethodId: unknown,
  ): RetailOrder {
    const order = this.#order(orderId);
    if (order.status !== "delivered") {
      fail("Non-delivered order cannot be exchanged");
    }
    const itemIds = pyList(itemIdsArg);
    const all = order.items.map((i) => i.item_id);
    for (const id of itemIds) {
      if (countOf(itemIds, id) > countOf(all, id)) {
        fail(`Number of ${pyStr(id)} not found.`);
      }
    }
    const newItemIds = pyList(newItemIdsArg);
    if (itemIds.length !== newItemIds.length) {
      fail("The number of items to be exchanged should match.");
    }
    let diff = 0;
    for (let i = 0; i < itemIds.length; i++) {
      const item = order.items.find((x) => x.item_id === itemIds[i]) ??
        fail(`Item ${pyStr(itemIds[i])} not found`);
      const variant = this.#variant(item.product_id, newItemIds[i]);
      if (!variant.available) {
        fail(`New item ${pyStr(newItemIds[i])} not found or available`);
      }
      diff += variant.price - item.price;
    }
    diff = pyRound2(diff);
    const method = this.#payment(order.user_id, paymentMethodId);
    if (isGiftCard(method) && method.balance < diff) {
      fail("Insufficient gift card balance to pay for the price difference");
    }
    order.status = "exchange requested";
    order.exchange_items = pySorted(itemIds) as string[];
    order.exchange_new_items = pySorted(newItemIds) as string[];
    order.exchange_payment_method_id = paymentMethodId as string;
    order.exchange_price_difference = diff;
    return order;
  }

  #find_user_id_by_name_zip(
    first: unknown,
    last: unknown,
    zip: unknown,
  ): string {
    for (const [id, u] of Object.entries(this.#db.users)) {
      if (
        u.name.first_name.toLowerCase() === pyLower(first) &&
        u.name.last_name.toLowerCase() === pyLower(last) &&
        u.address.zip === zip
      ) return id;
    }
    return fail("User not found");
  }

  #find_user_id_by_email(email: unknown): string {
    for (const [id, u] of Object.entries(this.#db.users)) {
      if (u.email.toLowerCase() === pyLower(email)) return id;
    }
    return fail("User not found");
  }

  #get_order_details(orderId: unknown): RetailOrder {
    return this.#order(orderId);
  }

  #get_product_details(productId: unknown) {
    return pyHas(this.#db.products, productId)
      ? this.#db.products[productId]
      : fail("Product not found");
  }

  #get_item_details(itemId: unknown): RetailVariant {
    for (const p of Object.values(this.#db.products)) {
      if (pyHas(p.variants, itemId)) return p.variants[itemId];
    }
    return fail("Item not found");
  }

  #get_user_details(userId: unknown): RetailUser {
    return this.#user(userId);
  }

  #list_all_product_types(): string {
    const byName: Record<string, string> = {};
    for (const p of Object.values(this.#db.products)) {
      byName[p.name] = p.product_id;
    }
    const sorted = Object.keys(byName).sort((a, b) =>
      a < b ? -1 : a > b ? 1 : 0
    );
    return pyJsonDumps(Object.fromEntries(sorted.map((k) => [k, byName[k]])));
  }

  #modify_pending_order_address(
    orderId: unknown,
    ...fields: unknown[]
  ): RetailOrder {
    const order = this.#order(orderId);
    if (!order.status.includes("pending")) {
      fail("Non-pending order cannot be modified");
    }
    order.address = this.#address(fields);
    return order;
  }

  #modify_pending_order_items(
    orderId: unknown,
    itemIdsArg: unknown,
    newItemIdsArg: unknown,
    paymentMethodId: unknown,
  ): RetailOrder {
    const order = this.#order(orderId);
    if (order.status !== "pending") {
      fail("Non-pending order cannot be modified");
    }
    const itemIds = pyList(itemIdsArg);
    const all = order.items.map((i) => i.item_id);
    for (const id of itemIds) {
      if (countOf(itemIds, id) > countOf(all, id)) {
        fail(`${pyStr(id)} not found`);
      }
    }
    const newItemIds = pyList(newItemIdsArg);
    if (itemIds.length !== newItemIds.length) {
      fail("The number of items to be exchanged should match");
    }
    let diff = 0;
    let variant: RetailVariant | undefined;
    for (let i = 0; i < itemIds.length; i++) {
      if (itemIds[i] === newItemIds[i]) {
        fail("The new item id should be different from the old item id");
      }
      const item = order.items.find((x) => x.item_id === itemIds[i]) ??
        fail(`Item ${pyStr(itemIds[i])} not found`);
      variant = this.#variant(item.product_id, newItemIds[i]);
      if (!variant.available) {
        fail(`New item ${pyStr(newItemIds[i])} not found or available`);
      }
      diff += variant.price - item.price;
    }
    const method = this.#payment(order.user_id, paymentMethodId);
    if (isGiftCard(method) && method.balance < diff) {
      fail("Insufficient gift card balance to pay for the new item");
    }
    order.payment_history.push({
      transaction_type: diff > 0 ? "payment" : "refund",
      amount: Math.abs(diff),
      payment_method_id: paymentMethodId as string,
    });
    if (isGiftCard(method)) method.balance = pyRound2(method.balance - diff);
    for (let i = 0; i < itemIds.length; i++) {
      const item = order.items.find((x) => x.item_id === itemIds[i]) ??
        fail(`Item ${pyStr(itemIds[i])} not found`);
      // τ² sets every modified item to the price and options of the LAST
      // new variant validated above (its loop variable); kept as is.
      item.item_id = newItemIds[i] as string;
      item.price = variant!.price;
      item.options = structuredClone(variant!.options);
    }
    order.status = "pending (item modified)";
    return order;
  }

  #modify_pending_order_payment(
    orderId: unknown,
    paymentMethodId: unknown,
  ): RetailOrder {
    const order = this.#order(orderId);
    if (!order.status.includes("pending")) {
      fail("Non-pending order cannot be modified");
    }
    const method = this.#payment(order.user_id, paymentMethodId);
    const history = order.payment_history;
    if (history.length !== 1 || history[0].transaction_type !== "payment") {
      fail("There should be exactly one payment for a pending order");
    }
    if (history[0].payment_method_id === paymentMethodId) {
      fail("The new payment method should be different from the current one");
    }
    const amount = history[0].amount;
    if (isGiftCard(method) && method.balance < amount) {
      fail("Insufficient gift card balance to pay for the order");
    }
    history.push(
      {
        transaction_type: "payment",
        amount,
        payment_method_id: paymentMethodId as string,
      },
      {
        transaction_type: "refund",
        amount,
        payment_method_id: history[0].payment_method_id,
      },
    );
    if (isGiftCard(method)) method.balance = pyRound2(method.balance - amount);
    const old = this.#payment(order.user_id, history[0].payment_method_id);
    if (isGiftCard(old)) old.balance = pyRound2(old.balance + amount);
    return order;
  }

  #modify_user_address(userId: unknown, ...fields: unknown[]): RetailUser {
    const user = this.#user(userId);
    user.address = this.#address(fields);
    return user;
  }

  #return_delivered_order_items(
    orderId: unknown,
    itemIdsArg: unknown,
    paymentMethodId: unknown,
  ): RetailOrder {
    const order = this.#order(orderId);
    if (order.status !== "delivered") {
      fail("Non-delivered order cannot be returned");
    }
    const user = this.#user(order.user_id);
    const method = this.#payment(user.user_id, paymentMethodId);
    if (
      !isGiftCard(method) &&
      paymentMethodId !== order.payment_history[0].payment_method_id
    ) fail("Payment method should be the original payment method");
    const itemIds = pyList(itemIdsArg);
    const all = order.items.map((i) => i.item_id);
    for (const id of itemIds) {
      if (countOf(itemIds, id) > countOf(all, id)) fail("Some item not found");
    }
    order.status = "return requested";
    order.return_items = pySorted(itemIds) as string[];
    order.return_payment_method_id = paymentMethodId as string;
    return order;
  }

  #transfer_to_human_agents(_summary: unknown): string {
    return "Transfer successful";
  }
}
