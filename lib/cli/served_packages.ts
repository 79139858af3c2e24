/**
 * `serve --package PKG` (served at `/v1/…`) and `--package NAME=PKG`
 * (repeatable, at `/p/NAME/v1/…`): each file loaded and checked (digest,
 * structure) before the server starts, and refused with the reason when it
 * is malformed, tampered with, or marked not servable by `compile` (its
 * replay of its own training sessions was not clean), saying what would
 * make it servable.
 *
 * @module
 */
import { loadPackage } from "../forms/validate_package.ts";
import { checkTrust } from "../package/package_signature.ts";
import { formOf } from "../forms/form_table.ts";
import type { ServedPackage } from "../model_gateway/serving.ts";
import { UsageError } from "./io.ts";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * The packages `--package` names, ready to serve.
 *
 * @param specs Each `--package` value: `FILE` or `NAME=FILE`.
 * @param trusted Keys (`ed25519:<x>`) of `--trust`: when any is given, only
 *   packages one of them signed are served.
 * @returns Route name ("" for `/v1/…`) → package.
 * @throws {UsageError} For a bad name, a repeated route, or a package that cannot be served (the reason).
 */
export async function servedPackages(
  specs: string[],
  trusted: readonly string[] = [],
): Promise<Record<string, ServedPackage>> {
  const out: Record<string, ServedPackage> = {};
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    const named = eq > 0 && NAME.test(spec.slice(0, eq));
    const name = named ? spec.slice(0, eq) : "";
    const file = named ? spec.slice(eq + 1) : spec;
    if (name in out) {
      throw new UsageError(
        name === ""
          ? "--package FILE was given twice: name the others (--package NAME=FILE, served at /p/NAME/v1/…)"
          : `--package ${name}=… was given twice`,
      );
    }
    try {
      const pkg = loadPackage(file);
      if (trusted.length) await checkTrust(pkg, trusted);
      out[name] = formOf(pkg.ir).serve(pkg);
    } catch (err) {
      throw new UsageError(
        `Cannot serve ${file}: ${(err as Error).message}`,
      );
    }
  }
  return out;
}
