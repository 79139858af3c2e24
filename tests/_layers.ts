/**
 * The folders of `lib/`, lowest first: a file may import its own folder and
 * folders before it, never one after it. `tests/layering_test.ts` enforces
 * the order on the import graph; `tests/docs/architecture_test.ts` checks
 * that ARCHITECTURE.md ("Layers", and its map) gives the same order.
 *
 * @module
 */

/** The folders of `lib/`, lowest layer first. */
export const LAYERS: readonly string[] = [
  "trace",
  "store",
  "team",
  "forwarder",
  "installers",
  "adapters",
  "tool_gateway",
  "proxy",
  "importers",
  "otel",
  "model_gateway",
  "models",
  "ingest",
  "lineage",
  "package",
  "runtime",
  "forms",
  "compiler",
  "control",
  "report",
  "cli",
];
