/**
 * The `./runtime` face: the old name of `./forms` (`lib/forms/mod.ts`),
 * kept for one version so that code importing it goes on working. It
 * exports exactly what `./forms` exports.
 *
 * @deprecated Import `@harness/harness/forms` instead: `./runtime` is
 * removed in the next version.
 * @module
 */
export * from "./mod.ts";
