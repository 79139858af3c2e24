/**
 * τ²'s retail tools that do not change the database: lookups, the
 * product catalogue, `calculate` and the transfer to a human agent.
 * Each takes the database and its arguments object (already checked for
 * names by the environment) and returns what τ² returns.
 *
 * @module
 */
import { evaluateArithmetic, PyEvalError } from "./_calculate.ts";
import { pyFloatRepr, pyJsonDumps, pyRound2 } from "./_py.ts";
import { getItem, getOrder, getProduct, getUser } from "./_retail_lookup.ts";
import {
  dumpOrder,
  dumpProduct,
  dumpUser,
  dumpVariant,
  type RetailDb,
} from "./retail_db.ts";
import { RetailToolError } from "./retail_errors.ts";

/** A retail tool over a database. */
export type RetailToolFn = (
  db: RetailDb,
  args: Record<string, unknown>,
) => unknown;

/** Python's `str.lower()` on an argument (an AttributeError otherwise). */
function lower(value: unknown): string {
  if (typeof value !== "string") {
    const kind = typeof value === "number"
      ? (Number.isInteger(value) ? "int" : "float")
      : value === null
      ? "NoneType"
      : Array.isArray(value)
      ? "list"
      : typeof value === "boolean"
      ? "bool"
      : "dict";
    throw new RetailToolError(`'${kind}' object has no attribute 'lower'`);
  }
  return value.toLowerCase();
}

/** `calculate`: the expression's value rounded to 2 decimals, as text. */
export function calculate(_db: RetailDb, a: Record<string, unknown>): string {
  const expression = String(a.expression);
  if (!/^[0-9+\-*/(). ]*$/.test(expression)) {
    throw new RetailToolError("Invalid characters in expression");
  }
  try {
    return pyFloatRepr(pyRound2(evaluateArithmetic(expression)));
  } catch (e) {
    if (e instanceof PyEvalError) {
      throw new RetailToolError(e.message, { cause: e });
    }
    throw e;
  }
}

/** `find_user_id_by_email`: case-insensitive email match. */
export function findUserIdByEmail(
  db: RetailDb,
  a: Record<string, unknown>,
): string {
  const email = lower(a.email);
  for (const [id, u] of Object.entries(db.users)) {
    if (u.email.toLowerCase() === email) return id;
  }
  throw new RetailToolError("User not found");
}

/** `find_user_id_by_name_zip`: case-insensitive names, exact zip. */
export function findUserIdByNameZip(
  db: RetailDb,
  a: Record<string, unknown>,
): string {
  for (const [id, u] of Object.entries(db.users)) {
    if (
      u.name.first_name.toLowerCase() === lower(a.first_name) &&
      u.name.last_name.toLowerCase() === lower(a.last_name) &&
      u.address.zip === a.zip
    ) {
      return id;
    }
  }
  throw new RetailToolError("User not found");
}

/** `get_order_details`. */
export function getOrderDetails(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  return dumpOrder(getOrder(db, a.order_id));
}

/** `get_product_details`. */
export function getProductDetails(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  return dumpProduct(getProduct(db, a.product_id));
}

/** `get_item_details`: a variant found by item id in any product. */
export function getItemDetails(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  return dumpVariant(getItem(db, a.item_id));
}

/** `get_user_details`. */
export function getUserDetails(
  db: RetailDb,
  a: Record<string, unknown>,
): Record<string, unknown> {
  return dumpUser(getUser(db, a.user_id));
}

/** `list_all_product_types`: JSON text of name → product id, names sorted. */
export function listAllProductTypes(db: RetailDb): string {
  const byName: Record<string, string> = {};
  for (const p of Object.values(db.products)) byName[p.name] = p.product_id;
  return pyJsonDumps(byName, { sortKeys: true });
}

/** `transfer_to_human_agents`. */
export function transferToHumanAgents(): string {
  return "Transfer successful";
}
