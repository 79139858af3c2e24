/**
 * The `./gateway` face: the old name of `./tool_gateway`
 * (`lib/tool_gateway/mod.ts`), kept for one version so that code importing
 * it goes on working. It exports exactly what `./tool_gateway` exports.
 * (The model API gateway is `./model_gateway`.)
 *
 * @deprecated Import `@harness/harness/tool_gateway` instead: `./gateway` is
 * removed in the next version.
 * @module
 */
export * from "./mod.ts";
