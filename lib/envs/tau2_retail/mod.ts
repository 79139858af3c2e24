/**
 * The τ²-bench retail domain as a TypeScript environment: the tools over a
 * live database ({@link RetailEnv}), their schemas and read-only flags,
 * τ²'s database rule for a task ({@link taskSolved}) and a replay check
 * of recorded simulations ({@link replayCheck}). No side effects on import.
 *
 * @module
 */
export { RetailEnv, type RetailTool, RetailToolError } from "./tools.ts";
export {
  RETAIL_TOOL_PARAMS,
  RETAIL_TOOL_READ_ONLY,
  RETAIL_TOOL_SCHEMAS,
  RETAIL_TOOL_TYPES,
  type RetailToolType,
} from "./schemas.ts";
export {
  type RetailAction,
  taskSolved,
  type TaskSolvedResult,
} from "./success.ts";
export {
  replayCheck,
  type ReplayCheckOptions,
  type ReplayCheckReport,
  type ReplayMismatch,
  type ReplayUnsolved,
  sameContent,
} from "./replay_check.ts";
export {
  firstDifference,
  normalizeRetailDb,
  type RetailAddress,
  type RetailDb,
  type RetailOrder,
  type RetailOrderItem,
  type RetailOrderPayment,
  type RetailPaymentMethod,
  type RetailProduct,
  type RetailUser,
  type RetailVariant,
} from "./db.ts";
export { FLOAT_KEYS, pyFloatRepr, pyJsonDumps, pyRound2 } from "./py_json.ts";
export { calculate } from "./calculate.ts";
