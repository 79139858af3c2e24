/**
 * Lookups shared by the retail tools, failing with τ²'s messages.
 *
 * @module
 */
import type {
  RetailDb,
  RetailOrder,
  RetailPaymentMethod,
  RetailProduct,
  RetailUser,
  RetailVariant,
} from "./retail_db.ts";
import { RetailToolError } from "./retail_errors.ts";

/** An own key of a record (string keys only, as Python dict lookups). */
function own<T>(rec: Record<string, T>, key: unknown): T | undefined {
  return typeof key === "string" && Object.hasOwn(rec, key)
    ? rec[key]
    : undefined;
}

/** The order, or `Order not found`. */
export function getOrder(db: RetailDb, orderId: unknown): RetailOrder {
  const o = own(db.orders, orderId);
  if (!o) throw new RetailToolError("Order not found");
  return o;
}

/** The user, or `User not found`. */
export function getUser(db: RetailDb, userId: unknown): RetailUser {
  const u = own(db.users, userId);
  if (!u) throw new RetailToolError("User not found");
  return u;
}

/** The product, or `Product not found`. */
export function getProduct(db: RetailDb, productId: unknown): RetailProduct {
  const p = own(db.products, productId);
  if (!p) throw new RetailToolError("Product not found");
  return p;
}

/** The variant with this item id in any product, or `Item not found`. */
export function getItem(db: RetailDb, itemId: unknown): RetailVariant {
  for (const p of Object.values(db.products)) {
    const v = own(p.variants, itemId);
    if (v) return v;
  }
  throw new RetailToolError("Item not found");
}

/** Which variant {@linkcode getVariant} looks up. */
export interface VariantIds {
  /** productId */
  productId: string;
  /** variantId */
  variantId: unknown;
}

/** A variant of a product, or `Product not found` / `Variant not found`. */
export function getVariant(
  db: RetailDb,
  ids: VariantIds,
): RetailVariant {
  const { productId, variantId } = ids;
  const v = own(getProduct(db, productId).variants, variantId);
  if (!v) throw new RetailToolError("Variant not found");
  return v;
}

/** Which payment method {@linkcode getPaymentMethod} looks up. */
export interface PaymentMethodIds {
  /** userId */
  userId: string;
  /** paymentMethodId */
  paymentMethodId: unknown;
}

/** A user's payment method, or `User not found` / `Payment method not found`. */
export function getPaymentMethod(
  db: RetailDb,
  ids: PaymentMethodIds,
): RetailPaymentMethod {
  const { userId, paymentMethodId } = ids;
  const pm = own(getUser(db, userId).payment_methods, paymentMethodId);
  if (!pm) throw new RetailToolError("Payment method not found");
  return pm;
}

/** Whether a payment method is a gift card. */
export function isGiftCard(pm: RetailPaymentMethod): boolean {
  return pm.source === "gift_card";
}

/** How often a value occurs in a list (Python's `list.count`). */
export function countOf(list: readonly unknown[], value: unknown): number {
  let n = 0;
  for (const v of list) if (v === value) n++;
  return n;
}

/** A list argument as τ² receives it (anything else is refused). */
export function stringList(value: unknown, name: string): string[] {
  if (!Array.isArray(value)) {
    throw new RetailToolError(
      `${name} must be a list of strings, got ${JSON.stringify(value)}`,
    );
  }
  return value as string[];
}
