/**
 * What both forms are bound to when they run: the tool registry, and the
 * error for a capability the package needs and nobody bound.
 *
 * @module
 */
import type { BoundTool } from "./bind_args.ts";

/** Tool name → callable (the same callables a ToolGateway wraps). */
export type ToolRegistry = Record<string, BoundTool>;

/** Capabilities the package needs that are not bound. */
export class MissingCapabilityError extends Error {
  /** What is missing. */
  readonly missing: string[];
  /**
   * Create a `MissingCapabilityError`.
   *
   * @param missing Missing tool names (and `model` when a model is needed).
   */
  constructor(missing: string[]) {
    super(
      `Cannot run the package: missing capabilities ${
        missing.join(", ")
      }; bind them (tools by name, a model for residual leaves) before running`,
    );
    this.name = "MissingCapabilityError";
    this.missing = missing;
  }
}
