/**
 * `RetailEnv`: the τ²-bench retail domain's tools over a private copy of
 * its database. A refused call throws a {@linkcode RetailToolError} whose
 * message is τ²'s; `content()` gives the text τ² puts in the tool message.
 *
 * @module
 */
import { pyJsonDumps } from "./_py.ts";
import { cloneRetailDb, type RetailDb } from "./retail_db.ts";
import { RetailToolError } from "./retail_errors.ts";
import {
  calculate,
  findUserIdByEmail,
  findUserIdByNameZip,
  getItemDetails,
  getOrderDetails,
  getProductDetails,
  getUserDetails,
  listAllProductTypes,
  type RetailToolFn,
  transferToHumanAgents,
} from "./retail_read_tools.ts";
import { RETAIL_TOOL_SCHEMAS } from "./retail_schemas.ts";
import {
  cancelPendingOrder,
  exchangeDeliveredOrderItems,
  modifyPendingOrderAddress,
  modifyPendingOrderItems,
  modifyPendingOrderPayment,
  modifyUserAddress,
  returnDeliveredOrderItems,
} from "./retail_write_tools.ts";

const IMPLEMENTATIONS: Record<string, RetailToolFn> = {
  calculate,
  cancel_pending_order: cancelPendingOrder,
  exchange_delivered_order_items: exchangeDeliveredOrderItems,
  find_user_id_by_email: findUserIdByEmail,
  find_user_id_by_name_zip: findUserIdByNameZip,
  get_item_details: getItemDetails,
  get_order_details: getOrderDetails,
  get_product_details: getProductDetails,
  get_user_details: getUserDetails,
  list_all_product_types: listAllProductTypes,
  modify_pending_order_address: modifyPendingOrderAddress,
  modify_pending_order_items: modifyPendingOrderItems,
  modify_pending_order_payment: modifyPendingOrderPayment,
  modify_user_address: modifyUserAddress,
  return_delivered_order_items: returnDeliveredOrderItems,
  transfer_to_human_agents: transferToHumanAgents,
};

/** A retail tool: one arguments object in, τ²'s return value out. */
export type RetailTool = (args: Record<string, unknown>) => unknown;

/** Python's words for a list of names: 'a', 'a' and 'b', 'a', 'b', and 'c'. */
function pyNames(names: string[]): string {
  const q = names.map((n) => `'${n}'`);
  if (q.length <= 1) return q.join("");
  if (q.length === 2) return `${q[0]} and ${q[1]}`;
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`;
}

/** Check argument names as Python's call would (unknown first, then missing). */
function checkArguments(
  name: string,
  params: string[],
  args: Record<string, unknown>,
): void {
  for (const k of Object.keys(args)) {
    if (!params.includes(k)) {
      throw new RetailToolError(
        `RetailTools.${name}() got an unexpected keyword argument '${k}'`,
      );
    }
  }
  const missing = params.filter((p) => !Object.hasOwn(args, p));
  if (missing.length > 0) {
    const s = missing.length === 1 ? "" : "s";
    throw new RetailToolError(
      `RetailTools.${name}() missing ${missing.length} required positional argument${s}: ${
        pyNames(missing)
      }`,
    );
  }
}

/** The τ² retail environment over its own copy of a database. */
export class RetailEnv {
  #db: RetailDb;
  /** Every retail tool by name, bound to this environment's database. */
  readonly tools: Readonly<Record<string, RetailTool>>;

  /**
   * Create an environment over a deep copy of `db` (never mutated).
   *
   * @param db A parsed retail `db.json` (products, users, orders).
   * @throws {TypeError} When `db` is not a retail database.
   *
   * @example
   * ```ts
   * import { RetailEnv } from "./retail_env.ts";
   * import { strictEqual } from "node:assert/strict";
   * const env = new RetailEnv({ products: {}, users: {}, orders: {} });
   * strictEqual(env.content(env.tools.list_all_product_types({})), "{}");
   * ```
   */
  constructor(db: unknown) {
    this.#db = cloneRetailDb(db);
    const tools: Record<string, RetailTool> = {};
    for (const schema of RETAIL_TOOL_SCHEMAS) {
      const impl = IMPLEMENTATIONS[schema.name];
      const params = Object.keys(schema.parameters.properties);
      tools[schema.name] = (args: Record<string, unknown> = {}) => {
        checkArguments(schema.name, params, args ?? {});
        return impl(this.#db, args ?? {});
      };
    }
    this.tools = Object.freeze(tools);
  }

  /** The current database (live: later calls change it; copy to keep). */
  get db(): RetailDb {
    return this.#db;
  }

  /**
   * Call a tool by name, as τ² does for a model's tool call.
   *
   * @param name Tool name.
   * @param args Arguments object.
   * @returns The tool's return value.
   * @throws {RetailToolError} τ²'s message (`Tool 'x' not found.` for an unknown tool).
   */
  call(name: string, args: Record<string, unknown>): unknown {
    const tool = Object.hasOwn(this.tools, name) ? this.tools[name] : undefined;
    if (!tool) throw new RetailToolError(`Tool '${name}' not found.`);
    return tool(args);
  }

  /**
   * The tool message content τ² would record for a result: a string as is,
   * a model dumped as Python's `json.dumps`, an error as `Error: <message>`.
   *
   * @param result A tool's return value, or the error it threw.
   * @returns The content text.
   */
  content(result: unknown): string {
    if (result instanceof Error) return `Error: ${result.message}`;
    if (typeof result === "string") return result;
    return pyJsonDumps(result);
  }

  /**
   * Call a tool and give its content, errors included (never throws for a
   * refused or broken call: τ² records any exception).
   *
   * @param name Tool name.
   * @param args Arguments object.
   * @returns The content text τ² would record.
   */
  respond(name: string, args: Record<string, unknown>): string {
    try {
      return this.content(this.call(name, args));
    } catch (e) {
      return this.content(e instanceof Error ? e : new Error(String(e)));
    }
  }
}
