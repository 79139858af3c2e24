/**
 * The capability module `compile.ts run` takes for order-desk packages:
 *
 * ```sh
 * deno task run out/order_desk.package.json --capabilities examples/order_desk/run_capabilities.ts --episode 123456
 * ```
 *
 * @module
 */
export {
  type Capabilities,
  createCapabilities,
  deskModel,
} from "./capabilities.ts";
