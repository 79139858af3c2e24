/**
 * The `packages` table: compiled packages recorded by digest, and the
 * package files under `<root>/packages/` registered when the index did not
 * know them (after a rebuild, or a package written by another process).
 *
 * @module
 */
import { join } from "node:path";
import type { SqliteIndex } from "./index_db.ts";

/** What the `packages` table keeps of a package document. */
export interface PackageDocument {
  /** The package's digest (its id). */
  digest: string;
  /** Its name and version. */
  manifest: { name: string; version: string };
  /** Its verification, kept as the summary. */
  verification?: unknown;
}

/** Registers one package (the store's `registerPackage`). */
export type RegisterPackage = (
  pkg: PackageDocument,
  path: string,
  captureIds: string[],
) => void;

/**
 * Insert (or replace) a package's row.
 *
 * @param index The index.
 * @param row The package document, where its file is and the captures it
 *   was compiled from.
 */
export function insertPackage(
  index: SqliteIndex,
  row: { pkg: PackageDocument; path: string; captureIds: string[] },
): void {
  const { pkg, path, captureIds } = row;
  index.execute(
    "INSERT OR REPLACE INTO packages VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    pkg.digest,
    pkg.manifest.name,
    pkg.manifest.version,
    pkg.digest,
    path,
    new Date().toISOString(),
    JSON.stringify(captureIds),
    JSON.stringify({ verification: pkg.verification ?? null }),
  );
}

/**
 * Packages recorded in the index, newest first.
 *
 * @param index The index.
 * @returns Rows of the `packages` table.
 */
export function selectPackages(index: SqliteIndex): Record<string, unknown>[] {
  return index.query(
    "SELECT package_id, name, version, path, created_at, capture_ids FROM packages ORDER BY created_at DESC, package_id",
  );
}

/**
 * Register package files under `<root>/packages/` the index does not know.
 * A file that is not a package, or that `register` refuses, is left alone.
 *
 * @param root The store root.
 * @param to The index, and what registers one package.
 */
export function catchUpPackages(
  root: string,
  to: { index: SqliteIndex; register: RegisterPackage },
): void {
  const { index, register } = to;
  const dir = join(root, "packages");
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(dir)].filter((e) =>
      e.isFile && e.name.endsWith(".package.json")
    )
      .map((e) => e.name).sort();
  } catch {
    return;
  }
  const known = new Set(
    index.query("SELECT package_id FROM packages").map((r) => r.package_id),
  );
  for (const name of names) {
    try {
      const pkg = JSON.parse(Deno.readTextFileSync(join(dir, name)));
      if (typeof pkg?.digest !== "string" || known.has(pkg.digest)) continue;
      register(pkg, join(dir, name), recordedCaptures(dir, name));
    } catch { /* not a package: leave it */ }
  }
}

/** The captures a package's side file records (`<name>.captures.json`), or none. */
function recordedCaptures(dir: string, name: string): string[] {
  try {
    const side = JSON.parse(
      Deno.readTextFileSync(join(dir, `${name}.captures.json`)),
    );
    if (Array.isArray(side?.capture_ids)) {
      return side.capture_ids.filter((x: unknown) => typeof x === "string");
    }
  } catch { /* no record of its captures */ }
  return [];
}
