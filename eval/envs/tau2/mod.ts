/**
 * The τ²-bench retail domain as a TypeScript environment: its tools over
 * a private copy of the database ({@linkcode RetailEnv}), their schemas
 * ({@linkcode RETAIL_TOOL_SCHEMAS}), τ²'s database rule
 * ({@linkcode taskSolved}) and a replay of recorded conversations against
 * the port ({@linkcode replayCheck}).
 *
 * @module
 */
export { RetailEnv, type RetailTool } from "./retail_env.ts";
export { RetailToolError } from "./retail_errors.ts";
export {
  RETAIL_TOOL_SCHEMAS,
  type RetailToolSchema,
} from "./retail_schemas.ts";
export {
  type RetailAction,
  taskSolved,
  type TaskVerdict,
} from "./retail_success.ts";
export {
  replayCheck,
  type ReplayMismatch,
  type ReplayReport,
  sameContent,
  type Tau2Message,
  type Tau2Simulation,
  type Tau2Task,
} from "./retail_replay_check.ts";
export {
  cloneRetailDb,
  firstDifference,
  type RetailAddress,
  type RetailDb,
  type RetailOrder,
  type RetailOrderItem,
  type RetailPayment,
  type RetailPaymentMethod,
  type RetailProduct,
  type RetailUser,
  type RetailVariant,
} from "./retail_db.ts";
