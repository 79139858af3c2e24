/**
 * `compile.ts keygen --out DIR`: make an Ed25519 key pair for signing
 * packages. Writes `DIR/signing_key.jwk` (the signing key, a JSON Web Key
 * with its private part `d`; mode 0600: keep it private) and
 * `DIR/signing_key.pub.jwk` (the public key: give it to `run --trust` and
 * `verify --trust`); refuses to overwrite either.
 *
 * @module
 */
import { join } from "node:path";
import type { Io } from "./io.ts";
import { exists, UsageError } from "./io.ts";

/** The signing key file's name. */
export const SIGNING_KEY_FILE = "signing_key.jwk";

/** The public key file's name. */
export const PUBLIC_KEY_FILE = "signing_key.pub.jwk";

/**
 * Make a key pair in `out`.
 *
 * @param o `out`: the folder (made when missing, 0700); `json`: one JSON
 *   object out.
 * @param io Output.
 * @returns Exit code.
 * @throws {UsageError} When a key file is already there.
 */
export async function keygenCommand(
  o: { out: string; json: boolean },
  io: Io,
): Promise<number> {
  const { out, json } = o;
  const { generateSigningKey } = await import(
    "../package/package_signature.ts"
  );
  const privateFile = join(out, SIGNING_KEY_FILE);
  const publicFile = join(out, PUBLIC_KEY_FILE);
  Deno.mkdirSync(out, { recursive: true, mode: 0o700 });
  for (const f of [privateFile, publicFile]) {
    if (exists(f)) {
      throw new UsageError(
        `${f} already exists: keygen never overwrites a key (choose another --out)`,
      );
    }
  }
  const { privateJwk, publicJwk, key } = await generateSigningKey();
  Deno.writeTextFileSync(privateFile, JSON.stringify(privateJwk) + "\n", {
    mode: 0o600,
    createNew: true,
  });
  Deno.writeTextFileSync(publicFile, JSON.stringify(publicJwk) + "\n", {
    createNew: true,
  });
  io.out(
    json
      ? JSON.stringify({
        key,
        signing_key: privateFile,
        public_key: publicFile,
      })
      : `key ${key}\n  signing key  ${privateFile} (keep it private: compile --sign ${privateFile})\n  public key   ${publicFile} (run --trust ${publicFile})`,
  );
  return 0;
}
