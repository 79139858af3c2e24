/**
 * The τ²-bench retail database as plain JSON records (the shape of
 * `db.json`), a deep copy, the model dumps τ² returns from its tools
 * (pydantic field order, optional order fields as null) and the
 * canonical comparison the DB check relies on.
 *
 * @module
 */

/** A variant (item) of a product. */
export interface RetailVariant {
  /** Item (variant) id. */
  item_id: string;
  /** Option name → value (color, size, …). */
  options: Record<string, string>;
  /** Whether it can be ordered. */
  available: boolean;
  /** Price in dollars. */
  price: number;
}

/** A product with its variants by item id. */
export interface RetailProduct {
  /** Name. */
  name: string;
  /** Product id. */
  product_id: string;
  /** Variants by item id. */
  variants: Record<string, RetailVariant>;
}

/** A postal address. */
export interface RetailAddress {
  /** First address line. */
  address1: string;
  /** Second address line (may be empty). */
  address2: string;
  /** City. */
  city: string;
  /** Country. */
  country: string;
  /** State or province. */
  state: string;
  /** Zip code. */
  zip: string;
}

/** A payment method: credit card, PayPal or gift card (with a balance). */
export interface RetailPaymentMethod {
  /** Kind: `credit_card`, `paypal` or `gift_card`. */
  source: string;
  /** Payment method id. */
  id: string;
  /** Card brand (credit cards). */
  brand?: string;
  /** Last four digits (credit cards). */
  last_four?: string;
  /** Balance in dollars (gift cards). */
  balance?: number;
}

/** A customer. */
export interface RetailUser {
  /** User id. */
  user_id: string;
  /** First and last name. */
  name: { first_name: string; last_name: string };
  /** Address. */
  address: RetailAddress;
  /** Email address. */
  email: string;
  /** Payment methods by id. */
  payment_methods: Record<string, RetailPaymentMethod>;
  /** Ids of the user's orders. */
  orders: string[];
}

/** A line of an order. */
export interface RetailOrderItem {
  /** Name. */
  name: string;
  /** Product id. */
  product_id: string;
  /** Item (variant) id. */
  item_id: string;
  /** Price in dollars. */
  price: number;
  /** Option name → value (color, size, …). */
  options: Record<string, string>;
}

/** A payment or refund of an order. */
export interface RetailPayment {
  /** Payment or refund. */
  transaction_type: "payment" | "refund";
  /** Amount in dollars. */
  amount: number;
  /** Payment method used. */
  payment_method_id: string;
}

/** An order; the optional fields appear once a write tool sets them. */
export interface RetailOrder {
  /** Order id (`#W…`). */
  order_id: string;
  /** User id. */
  user_id: string;
  /** Address. */
  address: RetailAddress;
  /** Lines of the order. */
  items: RetailOrderItem[];
  /** Status (`pending`, `delivered`, …). */
  status: string;
  /** Shipments: tracking ids and the items in them. */
  fulfillments: { tracking_id: string[]; item_ids: string[] }[];
  /** Payments and refunds, in order. */
  payment_history: RetailPayment[];
  /** Why it was cancelled. */
  cancel_reason?: string | null;
  /** Items to exchange (sorted). */
  exchange_items?: string[] | null;
  /** Items they are exchanged for (sorted). */
  exchange_new_items?: string[] | null;
  /** Payment method of the exchange. */
  exchange_payment_method_id?: string | null;
  /** Price difference of the exchange (rounded to cents). */
  exchange_price_difference?: number | null;
  /** Items to return (sorted). */
  return_items?: string[] | null;
  /** Payment method of the refund. */
  return_payment_method_id?: string | null;
}

/** The whole retail database. */
export interface RetailDb {
  /** Products by product id. */
  products: Record<string, RetailProduct>;
  /** Users by user id. */
  users: Record<string, RetailUser>;
  /** Orders by order id. */
  orders: Record<string, RetailOrder>;
}

/**
 * A deep copy of a retail database (or any JSON value).
 *
 * @param db The value.
 * @returns An independent copy.
 * @throws {TypeError} When `db` has no `products`, `users` and `orders` objects.
 */
export function cloneRetailDb(db: unknown): RetailDb {
  const d = db as Partial<RetailDb> | null;
  for (const key of ["products", "users", "orders"] as const) {
    if (!d || typeof d[key] !== "object" || d[key] === null) {
      throw new TypeError(
        `Not a retail database: "${key}" must be an object; pass the parsed db.json of the τ² retail domain`,
      );
    }
  }
  return structuredClone(d) as RetailDb;
}

/** `pydantic` dump of an address. */
export function dumpAddress(a: RetailAddress): RetailAddress {
  return {
    address1: a.address1,
    address2: a.address2,
    city: a.city,
    country: a.country,
    state: a.state,
    zip: a.zip,
  };
}

/**
 * The dump τ² returns for an order: field order of its model, the optional
 * fields present (null when unset), nested lists copied.
 *
 * @param o The order.
 * @returns A fresh object.
 */
export function dumpOrder(o: RetailOrder): Record<string, unknown> {
  const list = (v: string[] | null | undefined) => v ? [...v] : null;
  return {
    order_id: o.order_id,
    user_id: o.user_id,
    address: dumpAddress(o.address),
    items: o.items.map((i) => ({
      name: i.name,
      product_id: i.product_id,
      item_id: i.item_id,
      price: i.price,
      options: { ...i.options },
    })),
    status: o.status,
    fulfillments: o.fulfillments.map((f) => ({
      tracking_id: [...f.tracking_id],
      item_ids: [...f.item_ids],
    })),
    payment_history: o.payment_history.map((p) => ({
      transaction_type: p.transaction_type,
      amount: p.amount,
      payment_method_id: p.payment_method_id,
    })),
    cancel_reason: o.cancel_reason ?? null,
    exchange_items: list(o.exchange_items),
    exchange_new_items: list(o.exchange_new_items),
    exchange_payment_method_id: o.exchange_payment_method_id ?? null,
    exchange_price_difference: o.exchange_price_difference ?? null,
    return_items: list(o.return_items),
    return_payment_method_id: o.return_payment_method_id ?? null,
  };
}

/** The dump of a payment method, by its kind. */
function dumpPaymentMethod(p: RetailPaymentMethod): Record<string, unknown> {
  if (p.source === "gift_card") {
    return { source: p.source, id: p.id, balance: p.balance };
  }
  if (p.source === "credit_card") {
    return {
      source: p.source,
      id: p.id,
      brand: p.brand,
      last_four: p.last_four,
    };
  }
  return { source: p.source, id: p.id };
}

/**
 * The dump τ² returns for a user.
 *
 * @param u The user.
 * @returns A fresh object.
 */
export function dumpUser(u: RetailUser): Record<string, unknown> {
  return {
    user_id: u.user_id,
    name: { first_name: u.name.first_name, last_name: u.name.last_name },
    address: dumpAddress(u.address),
    email: u.email,
    payment_methods: Object.fromEntries(
      Object.entries(u.payment_methods).map((
        [k, p],
      ) => [k, dumpPaymentMethod(p)]),
    ),
    orders: [...u.orders],
  };
}

/**
 * The dump τ² returns for a variant.
 *
 * @param v The variant.
 * @returns A fresh object.
 */
export function dumpVariant(v: RetailVariant): Record<string, unknown> {
  return {
    item_id: v.item_id,
    options: { ...v.options },
    available: v.available,
    price: v.price,
  };
}

/**
 * The dump τ² returns for a product.
 *
 * @param p The product.
 * @returns A fresh object.
 */
export function dumpProduct(p: RetailProduct): Record<string, unknown> {
  return {
    name: p.name,
    product_id: p.product_id,
    variants: Object.fromEntries(
      Object.entries(p.variants).map(([k, v]) => [k, dumpVariant(v)]),
    ),
  };
}

/** A path step for a key: `.name` or `["odd key"]`. */
function step(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
    ? `.${key}`
    : `[${JSON.stringify(key)}]`;
}

/**
 * The first path where two JSON values differ, or null when they are
 * equal. Key order does not matter; a missing key equals null (pydantic
 * fills unset optional fields with None); keys are visited in sorted order.
 *
 * @param a One value.
 * @param b The other.
 * @param path The path of `a` and `b` (for recursion).
 * @returns A path like `$.orders["#W1"].status`, or null.
 */
export function firstDifference(
  a: unknown,
  b: unknown,
  path = "$",
): string | null {
  const x = a === undefined ? null : a;
  const y = b === undefined ? null : b;
  if (
    x === null || y === null || typeof x !== "object" || typeof y !== "object"
  ) {
    return x === y ? null : path;
  }
  if (Array.isArray(x) !== Array.isArray(y)) return path;
  if (Array.isArray(x) && Array.isArray(y)) {
    const n = Math.max(x.length, y.length);
    for (let i = 0; i < n; i++) {
      if (i >= x.length || i >= y.length) return `${path}[${i}]`;
      const d = firstDifference(x[i], y[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  const ox = x as Record<string, unknown>;
  const oy = y as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(ox), ...Object.keys(oy)])].sort();
  for (const k of keys) {
    const d = firstDifference(ox[k], oy[k], `${path}${step(k)}`);
    if (d) return d;
  }
  return null;
}
