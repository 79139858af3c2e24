/**
 * The trajectory formats `ingest.ts import` reads (OTLP files are read by
 * `lib/otel/import.ts`).
 *
 * @module
 */

/** Supported formats. */
export const IMPORT_FORMATS = ["openai-messages", "tau-bench", "tau2"] as const;

/** A supported format. */
export type ImportFormat = typeof IMPORT_FORMATS[number];
