/**
 * A capabilities module for `compile.ts run` with the mistake issue #37
 * item 7 met: the order desk's tools, each read-only one wrapped as
 * `(a) => …`, whose one parameter names none of the arguments the package
 * calls it with, so no call can be bound.
 *
 * @module
 */
import { createCapabilities as desk } from "../../examples/order_desk/capabilities.ts";

/**
 * The desk's capabilities with unbindable read-only tools.
 *
 * @param options Episode number.
 * @returns The capabilities.
 */
export function createCapabilities(options: { episode?: number } = {}) {
  const caps = desk(options);
  const tools = { ...caps.tools };
  for (const name of ["find_user", "list_orders", "get_order"]) {
    const inner = tools[name] as (value: unknown) => unknown;
    tools[name] = (a: unknown) => inner(a);
  }
  return { ...caps, tools };
}
