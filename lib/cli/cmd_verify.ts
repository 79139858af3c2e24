/**
 * `compile.ts verify PACKAGE.json [--trust KEY ...] [--json]`: what can be
 * checked of a package from the package alone (format, digest, structure,
 * the recorded replay verdict, effects, signature; see
 * `lib/forms/verify_package.ts`), one line per check.
 *
 * @module
 */
import type { Io } from "./io.ts";
import { UsageError } from "./io.ts";

/** Options of {@linkcode verifyCommand}. */
export interface VerifyCommandOptions {
  /** The package file. */
  path: string;
  /** Trusted keys: `ed25519:<x>` or key files. */
  trust?: string[];
  /** One JSON object out. */
  json?: boolean;
}

/**
 * Read trusted keys from the command line (`--trust`), for `run` and
 * `verify`.
 *
 * @param specs The values of `--trust`.
 * @returns The keys' names (`ed25519:<x>`).
 * @throws {UsageError} A value that is neither a key nor a key file.
 */
export async function trustedKeys(specs: string[]): Promise<string[]> {
  const { readTrustedKeys } = await import(
    "../package/package_signature.ts"
  );
  try {
    return readTrustedKeys(specs, Deno.readTextFileSync);
  } catch (err) {
    throw new UsageError(`--trust: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Verify a package file.
 *
 * @param o The package file, trusted keys, JSON output.
 * @param io Output.
 * @returns Exit code: 0 when every check passed, 1 otherwise.
 * @throws {UsageError} An unreadable file, a bad `--trust` value.
 */
export async function verifyCommand(
  o: VerifyCommandOptions,
  io: Io,
): Promise<number> {
  const { path } = o;
  const trusted = o.trust?.length ? await trustedKeys(o.trust) : [];
  let doc: unknown;
  try {
    doc = JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new UsageError(
      `Cannot read the package ${path}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const { verifyPackage } = await import("../forms/verify_package.ts");
  const r = await verifyPackage(doc, { trusted });
  if (o.json) {
    io.out(JSON.stringify({ file: path, ...r }, null, 2));
  } else {
    io.out(
      `${path}: ${r.ok ? "verified" : "NOT verified"} (package ${
        r.name ?? "?"
      }, ${r.digest ?? "no digest"})`,
    );
    for (const c of r.checks) {
      const mark = c.ok === true ? "ok" : c.ok === false ? "FAIL" : "-";
      io.out(`  ${c.check.padEnd(10)} ${mark.padEnd(4)} ${c.detail}`);
    }
  }
  return r.ok ? 0 : 1;
}
