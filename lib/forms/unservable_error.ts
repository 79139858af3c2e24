/**
 * {@linkcode UnservableError}: a package that cannot be served at the model
 * API (one `compile` marked not servable, a form with no gateway driver),
 * and {@linkcode assertServable}, which each form's `serve` calls first.
 *
 * @module
 */
import type { BehaviorPackage } from "../package/package.ts";
import { servableRemedy } from "../package/applies_to.ts";

/** The package cannot be served at the model API. */
export class UnservableError extends Error {
  /**
   * Create an `UnservableError`.
   *
   * @param message Why, and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "UnservableError";
  }
}

/**
 * Refuse a package `compile` marked not servable (its replay of its own
 * training sessions was not clean), saying why and what would make it
 * servable.
 *
 * @param pkg The package.
 * @throws {UnservableError} When `manifest.not_servable` says why not.
 */
export function assertServable(pkg: BehaviorPackage): void {
  const why = pkg.manifest.not_servable;
  if (why) {
    throw new UnservableError(
      `${pkg.manifest.name} is marked not servable: ${why}. To make it servable, ${servableRemedy()}`,
    );
  }
}
