/**
 * The τ²-bench retail database: its records (products with variants,
 * users with payment methods, orders with items and payment history),
 * normalization to what τ²'s pydantic models hold (fields in declaration
 * order, unknown keys dropped, the order's optional fields present as
 * null), and a canonical comparison that names the first differing path.
 *
 * @module
 */

/** A variant (an item) of a product. */
export interface RetailVariant {
  item_id: string;
  options: Record<string, string>;
  available: boolean;
  price: number;
}

/** A product and its variants by item id. */
export interface RetailProduct {
  name: string;
  product_id: string;
  variants: Record<string, RetailVariant>;
}

/** A postal address. */
export interface RetailAddress {
  address1: string;
  address2: string;
  city: string;
  country: string;
  state: string;
  zip: string;
}

/** A payment method: credit card, PayPal or gift card (with a balance). */
export type RetailPaymentMethod =
  | { source: "credit_card"; id: string; brand: string; last_four: string }
  | { source: "paypal"; id: string }
  | { source: "gift_card"; id: string; balance: number };

/** A customer. */
export interface RetailUser {
  user_id: string;
  name: { first_name: string; last_name: string };
  address: RetailAddress;
  email: string;
  payment_methods: Record<string, RetailPaymentMethod>;
  orders: string[];
}

/** An item of an order. */
export interface RetailOrderItem {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Record<string, string>;
}

/** A payment or refund of an order. */
export interface RetailOrderPayment {
  transaction_type: "payment" | "refund";
  amount: number;
  payment_method_id: string;
}

/** An order. */
export interface RetailOrder {
  order_id: string;
  user_id: string;
  address: RetailAddress;
  items: RetailOrderItem[];
  status: string;
  fulfillments: { tracking_id: string[]; item_ids: string[] }[];
  payment_history: RetailOrderPayment[];
  cancel_reason: string | null;
  exchange_items: string[] | null;
  exchange_new_items: string[] | null;
  exchange_payment_method_id: string | null;
  exchange_price_difference: number | null;
  return_items: string[] | null;
  return_payment_method_id: string | null;
}

/** The whole database. */
export interface RetailDb {
  products: Record<string, RetailProduct>;
  users: Record<string, RetailUser>;
  orders: Record<string, RetailOrder>;
}

type Obj = Record<string, unknown>;

function obj(v: unknown, where: string): Obj {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new TypeError(
      `Retail database: ${where} must be an object, got ${
        Array.isArray(v) ? "an array" : typeof v
      }`,
    );
  }
  return v as Obj;
}

function pick<T>(v: unknown, keys: readonly string[], where: string): T {
  const o = obj(v, where);
  const out: Obj = {};
  for (const k of keys) {
    if (!(k in o)) {
      throw new TypeError(`Retail database: ${where} lacks "${k}"`);
    }
    out[k] = o[k];
  }
  return out as T;
}

const ADDRESS_KEYS = [
  "address1",
  "address2",
  "city",
  "country",
  "state",
  "zip",
] as const;

const ORDER_OPTIONAL_KEYS = [
  "cancel_reason",
  "exchange_items",
  "exchange_new_items",
  "exchange_payment_method_id",
  "exchange_price_difference",
  "return_items",
  "return_payment_method_id",
] as const;

/**
 * An address record in τ²'s field order.
 *
 * @param v The raw address.
 * @param where Where it sits (for the error message).
 * @returns The address.
 * @throws {TypeError} A field is missing.
 */
export function normalizeAddress(v: unknown, where: string): RetailAddress {
  return pick<RetailAddress>(v, ADDRESS_KEYS, where);
}

function normalizePayment(v: unknown, where: string): RetailPaymentMethod {
  const source = obj(v, where).source;
  if (source === "credit_card") {
    return pick(v, ["source", "id", "brand", "last_four"], where);
  }
  if (source === "gift_card") {
    return pick(v, ["source", "id", "balance"], where);
  }
  if (source === "paypal") return pick(v, ["source", "id"], where);
  throw new TypeError(
    `Retail database: ${where} has source ${
      JSON.stringify(source)
    }; expected "credit_card", "gift_card" or "paypal"`,
  );
}

function mapValues<T>(
  v: unknown,
  where: string,
  f: (x: unknown, w: string) => T,
) {
  const out: Record<string, T> = {};
  for (const [k, x] of Object.entries(obj(v, where))) {
    out[k] = f(x, `${where}["${k}"]`);
  }
  return out;
}

function normalizeProduct(v: unknown, where: string): RetailProduct {
  const p = pick<RetailProduct>(v, ["name", "product_id", "variants"], where);
  p.variants = mapValues(
    p.variants,
    `${where}.variants`,
    (x, w) =>
      pick<RetailVariant>(x, ["item_id", "options", "available", "price"], w),
  );
  return p;
}

function normalizeUser(v: unknown, where: string): RetailUser {
  const u = pick<RetailUser>(v, [
    "user_id",
    "name",
    "address",
    "email",
    "payment_methods",
    "orders",
  ], where);
  u.name = pick(u.name, ["first_name", "last_name"], `${where}.name`);
  u.address = normalizeAddress(u.address, `${where}.address`);
  u.payment_methods = mapValues(
    u.payment_methods,
    `${where}.payment_methods`,
    normalizePayment,
  );
  return u;
}

function normalizeOrder(v: unknown, where: string): RetailOrder {
  const o = pick<RetailOrder>(v, [
    "order_id",
    "user_id",
    "address",
    "items",
    "status",
    "fulfillments",
    "payment_history",
  ], where);
  o.address = normalizeAddress(o.address, `${where}.address`);
  o.items = (o.items as unknown[]).map((x, i) =>
    pick<RetailOrderItem>(x, [
      "name",
      "product_id",
      "item_id",
      "price",
      "options",
    ], `${where}.items[${i}]`)
  );
  o.fulfillments = (o.fulfillments as unknown[]).map((x, i) =>
    pick(x, ["tracking_id", "item_ids"], `${where}.fulfillments[${i}]`)
  );
  o.payment_history = (o.payment_history as unknown[]).map((x, i) =>
    pick<RetailOrderPayment>(x, [
      "transaction_type",
      "amount",
      "payment_method_id",
    ], `${where}.payment_history[${i}]`)
  );
  const raw = v as Obj;
  const rec = o as unknown as Obj;
  for (const k of ORDER_OPTIONAL_KEYS) {
    rec[k] = raw[k] === undefined ? null : raw[k];
  }
  return o;
}

/**
 * A deep copy of a parsed `db.json` as τ²'s models hold it: fields in
 * declaration order, unknown keys dropped, the order's optional fields
 * (`cancel_reason`, `exchange_*`, `return_*`) present as null. The input
 * is never changed; normalizing a normalized database gives an equal one.
 *
 * @param raw The parsed database (`{products, users, orders}`).
 * @returns The normalized copy.
 * @throws {TypeError} A record lacks a field or has the wrong shape.
 */
export function normalizeRetailDb(raw: unknown): RetailDb {
  // One JSON copy, then records rebuilt in field order without copying again.
  const o = obj(raw, "the database");
  const copy = JSON.parse(JSON.stringify(o)) as Obj;
  return {
    products: mapValues(copy.products, "products", normalizeProduct),
    users: mapValues(copy.users, "users", normalizeUser),
    orders: mapValues(copy.orders, "orders", normalizeOrder),
  };
}

function pathKey(path: string, k: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)
    ? `${path}.${k}`
    : `${path}[${JSON.stringify(k)}]`;
}

/**
 * The first path where two JSON values differ (deep equality, key order
 * not significant, numbers by value), or null when they are equal.
 *
 * @param a One value.
 * @param b The other.
 * @param path The path prefix to report. @default "db"
 * @returns A description such as `db.orders["#W1"].status: "pending" vs "cancelled"`, or null.
 */
export function firstDifference(
  a: unknown,
  b: unknown,
  path = "db",
): string | null {
  if (a === b) return null;
  const show = (v: unknown) => {
    const t = JSON.stringify(v) ?? String(v);
    return t.length > 80 ? `${t.slice(0, 77)}...` : t;
  };
  const bothObjects = a !== null && b !== null && typeof a === "object" &&
    typeof b === "object";
  if (!bothObjects || Array.isArray(a) !== Array.isArray(b)) {
    if (
      typeof a === "number" && typeof b === "number" &&
      Number.isNaN(a) && Number.isNaN(b)
    ) return null;
    return `${path}: ${show(a)} vs ${show(b)}`;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return a.length === b.length
      ? null
      : `${path}: length ${a.length} vs ${b.length}`;
  }
  const ao = a as Obj;
  const bo = b as Obj;
  const keys = [...new Set([...Object.keys(ao), ...Object.keys(bo)])].sort();
  for (const k of keys) {
    if (!(k in ao)) return `${pathKey(path, k)}: missing vs ${show(bo[k])}`;
    if (!(k in bo)) return `${pathKey(path, k)}: ${show(ao[k])} vs missing`;
    const d = firstDifference(ao[k], bo[k], pathKey(path, k));
    if (d) return d;
  }
  return null;
}
