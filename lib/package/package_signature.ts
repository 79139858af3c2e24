/**
 * Package signatures: a package's `digest` says its content is whole
 * (integrity); a signature says who built it (authenticity). A signed
 * package carries one more top-level field beside `digest`:
 *
 * ```json
 * "signature": { "alg": "Ed25519", "key": "ed25519:<x>", "value": "<base64url>" }
 * ```
 *
 * `key` names the signer's public key (`ed25519:` and the JWK `x`, the 32
 * raw key bytes in base64url); `value` is the Ed25519 signature (64 bytes,
 * base64url) of the UTF-8 text `harness.package.v1 <digest>`. The digest
 * rule is unchanged: `sha256:` over the canonical package without `digest`
 * and without `signature`, so an unsigned package is byte for byte what it
 * was, and signing one never changes its digest.
 *
 * Keys are JSON Web Keys (RFC 8037, `{"kty": "OKP", "crv": "Ed25519", "x",
 * "d"}`): the signing key file holds `d` (keep it private), the public key
 * file does not. Signing and checking go through WebCrypto.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Digest } from "../trace/hash.ts";
import type { BehaviorPackage } from "./package.ts";

/** The one signature algorithm. */
export const SIGNATURE_ALG = "Ed25519";

/** Prefix of a public key's name (`ed25519:<x>`). */
export const KEY_PREFIX = "ed25519:";

/** The signature record of a signed package. */
export interface PackageSignature {
  /** `Ed25519`. */
  alg: string;
  /** The signer's public key, `ed25519:<x>`. */
  key: string;
  /** The signature of `harness.package.v1 <digest>`, base64url. */
  value: string;
}

/** A package that may carry a signature. */
export type SignedPackage = BehaviorPackage & { signature?: PackageSignature };

/** An Ed25519 JSON Web Key as the key files hold it. */
export interface Ed25519Jwk {
  /** `OKP`. */
  kty: "OKP";
  /** `Ed25519`. */
  crv: "Ed25519";
  /** The public key: 32 bytes, base64url. */
  x: string;
  /** The private key: 32 bytes, base64url (signing key files only). */
  d?: string;
  /** The key's name, `ed25519:<x>`. */
  kid?: string;
}

/** A signing key, ready to sign. */
export interface SigningKey {
  /** Its public key's name, `ed25519:<x>`. */
  key: string;
  /** The WebCrypto private key. */
  privateKey: CryptoKey;
}

/** A package that the trusted keys do not vouch for. */
export class UntrustedPackageError extends Error {
  /**
   * Create an `UntrustedPackageError`.
   *
   * @param message Why, naming the package and the key.
   */
  constructor(message: string) {
    super(message);
    this.name = "UntrustedPackageError";
  }
}

const KEY_X = /^[A-Za-z0-9_-]{43}$/;

function toBase64Url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const s = atob(b64 + "=".repeat((4 - b64.length % 4) % 4));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

function message(digest: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`harness.package.v1 ${digest}`);
}

/**
 * The digest a package should carry: `sha256:` over its canonical JSON
 * without `digest` and `signature`.
 *
 * @param doc A package document.
 * @returns `sha256:<hex>`.
 */
export function packageDigest(doc: Record<string, unknown>): string {
  const { digest: _d, signature: _s, ...body } = doc;
  return sha256Digest(canonicalJson(body));
}

/**
 * The name of a public key: `ed25519:<x>` from a JWK (public or private)
 * or from that name itself.
 *
 * @param spec A parsed JWK, or a string `ed25519:<x>`.
 * @returns The key's name.
 * @throws {TypeError} When it is not an Ed25519 key.
 */
export function publicKeyName(spec: unknown): string {
  if (typeof spec === "string") {
    const x = spec.startsWith(KEY_PREFIX) ? spec.slice(KEY_PREFIX.length) : "";
    if (!KEY_X.test(x)) {
      throw new TypeError(
        `"${spec}" is not a public key: expected ${KEY_PREFIX} and 43 base64url characters`,
      );
    }
    return spec;
  }
  const jwk = spec as JsonWebKey | null;
  if (
    typeof jwk !== "object" || jwk === null || jwk.kty !== "OKP" ||
    jwk.crv !== "Ed25519" || typeof jwk.x !== "string" || !KEY_X.test(jwk.x)
  ) {
    throw new TypeError(
      `Not an Ed25519 JSON Web Key: expected {"kty": "OKP", "crv": "Ed25519", "x": <43 base64url characters>}`,
    );
  }
  return KEY_PREFIX + jwk.x;
}

/**
 * Make a new Ed25519 key pair, as JSON Web Keys (`kid` is the key's name).
 *
 * @returns The private JWK (with `d`), the public one, and the key's name.
 */
export async function generateSigningKey(): Promise<
  { privateJwk: Ed25519Jwk; publicJwk: Ed25519Jwk; key: string }
> {
  const pair = await crypto.subtle.generateKey(
    { name: SIGNATURE_ALG },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const { x, d } = await crypto.subtle.exportKey("jwk", pair.privateKey);
  const key = KEY_PREFIX + x;
  return {
    privateJwk: { kty: "OKP", crv: "Ed25519", x: x!, d: d!, kid: key },
    publicJwk: { kty: "OKP", crv: "Ed25519", x: x!, kid: key },
    key,
  };
}

async function publicKey(name: string): Promise<CryptoKey> {
  return await crypto.subtle.importKey(
    "raw",
    fromBase64Url(name.slice(KEY_PREFIX.length)),
    { name: SIGNATURE_ALG },
    false,
    ["verify"],
  );
}

/**
 * Read a signing key from its JWK; checks that `x` is `d`'s public key.
 *
 * @param jwk The parsed key file.
 * @returns The key, ready to sign.
 * @throws {TypeError} When it is not an Ed25519 private key, or `x` does not match `d`.
 */
export async function importSigningKey(jwk: unknown): Promise<SigningKey> {
  const key = publicKeyName(jwk);
  const d = (jwk as JsonWebKey).d;
  if (typeof d !== "string" || !KEY_X.test(d)) {
    throw new TypeError(
      `The key ${key} has no private part ("d"): sign with the signing key file, not the public one`,
    );
  }
  const { kty, crv, x } = jwk as JsonWebKey;
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey(
      "jwk",
      { kty, crv, x, d },
      { name: SIGNATURE_ALG },
      false,
      ["sign"],
    );
  } catch (err) {
    throw new TypeError(`Cannot use the signing key ${key}: ${err}`, {
      cause: err,
    });
  }
  const probe = message("probe");
  const sig = await crypto.subtle.sign(SIGNATURE_ALG, privateKey, probe);
  if (
    !await crypto.subtle.verify(SIGNATURE_ALG, await publicKey(key), sig, probe)
  ) {
    throw new TypeError(
      `The signing key's "x" (${key}) is not the public key of its "d": the key file is damaged`,
    );
  }
  return { key, privateKey };
}

/**
 * Sign a package: the same package with a `signature` (a former one
 * replaced); its digest is unchanged.
 *
 * @param pkg The package (its digest must match its content).
 * @param key The signing key.
 * @returns The signed package.
 * @throws {TypeError} When the package's digest does not match its content.
 */
export async function signPackage(
  pkg: BehaviorPackage,
  key: SigningKey,
): Promise<SignedPackage> {
  const { signature: _old, ...doc } = pkg as SignedPackage;
  const actual = packageDigest(doc as unknown as Record<string, unknown>);
  if (actual !== doc.digest) {
    throw new TypeError(
      `Cannot sign package "${doc.manifest?.name}": it says ${doc.digest} but hashes to ${actual}`,
    );
  }
  const sig = await crypto.subtle.sign(
    SIGNATURE_ALG,
    key.privateKey,
    message(doc.digest),
  );
  return {
    ...doc,
    signature: {
      alg: SIGNATURE_ALG,
      key: key.key,
      value: toBase64Url(new Uint8Array(sig)),
    },
  };
}

/** What {@linkcode readSignature} found. */
export type SignatureState =
  | { signed: false }
  | { signed: true; key: string; valid: boolean; why: string | null };

/**
 * Check a package's signature against its own content: the digest must
 * match the content and the signature must verify under the key it names.
 *
 * @param pkg A package document.
 * @returns Unsigned, or signed by a key and whether it verifies (and why not).
 */
export async function readSignature(
  pkg: SignedPackage,
): Promise<SignatureState> {
  const s = pkg.signature as unknown;
  if (s === undefined) return { signed: false };
  const rec = s as Partial<PackageSignature> | null;
  const keyText = typeof rec?.key === "string" ? rec.key : "(no key)";
  const bad = (why: string): SignatureState => ({
    signed: true,
    key: keyText,
    valid: false,
    why,
  });
  if (typeof rec !== "object" || rec === null || rec.alg !== SIGNATURE_ALG) {
    return bad(`the signature is not an ${SIGNATURE_ALG} record`);
  }
  let key: string;
  try {
    key = publicKeyName(rec.key);
  } catch (err) {
    return bad((err as Error).message);
  }
  if (typeof rec.value !== "string" || !/^[A-Za-z0-9_-]{86}$/.test(rec.value)) {
    return bad("the signature value is not 64 bytes of base64url");
  }
  const actual = packageDigest(pkg as unknown as Record<string, unknown>);
  if (actual !== pkg.digest) {
    return bad(
      `the package says ${pkg.digest} but its content hashes to ${actual}`,
    );
  }
  const valid = await crypto.subtle.verify(
    SIGNATURE_ALG,
    await publicKey(key),
    fromBase64Url(rec.value),
    message(pkg.digest),
  );
  return {
    signed: true,
    key,
    valid,
    why: valid
      ? null
      : "the signature does not verify: the package was changed after it was signed, or the signature is not this key's",
  };
}

/**
 * Refuse a package that no trusted key signed: unsigned, signed by another
 * key, or with a signature that does not verify over its content.
 *
 * @param pkg The package (already validated, or not: the digest is recomputed).
 * @param keys Trusted public keys (`ed25519:<x>`, see {@linkcode publicKeyName}).
 * @returns The trusted key that signed it.
 * @throws {UntrustedPackageError} Naming the package, the key and why.
 * @throws {TypeError} When `keys` is empty.
 */
export async function checkTrust(
  pkg: SignedPackage,
  keys: readonly string[],
): Promise<string> {
  if (keys.length === 0) {
    throw new TypeError("checkTrust() needs at least one trusted key");
  }
  const name = `"${pkg.manifest?.name}" (${pkg.digest})`;
  const state = await readSignature(pkg);
  if (!state.signed) {
    throw new UntrustedPackageError(
      `Package ${name} is not signed: only packages signed by a trusted key run (sign it with compile.ts --sign KEYFILE)`,
    );
  }
  if (!keys.includes(state.key)) {
    throw new UntrustedPackageError(
      `Package ${name} is signed by ${state.key}, which is not a trusted key (trusted: ${
        keys.join(", ")
      })`,
    );
  }
  if (!state.valid) {
    throw new UntrustedPackageError(
      `Package ${name} has a bad signature by ${state.key}: ${state.why}`,
    );
  }
  return state.key;
}

/**
 * The trusted keys named on a command line: each value is a key's name
 * (`ed25519:<x>`) or the path of a key file (a public or signing JWK, of
 * which only the public part is used).
 *
 * @param specs The values given.
 * @param readTextFile Reads a file (the entry passes `Deno.readTextFileSync`).
 * @returns The keys' names.
 * @throws {TypeError} A value that is neither, or a file that is not an Ed25519 key.
 */
export function readTrustedKeys(
  specs: readonly string[],
  readTextFile: (path: string) => string,
): string[] {
  return specs.map((spec) => {
    if (spec.startsWith(KEY_PREFIX)) return publicKeyName(spec);
    let doc: unknown;
    try {
      doc = JSON.parse(readTextFile(spec));
    } catch (err) {
      throw new TypeError(
        `Cannot read the trusted key ${spec}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    try {
      return publicKeyName(doc);
    } catch (err) {
      throw new TypeError(`${spec}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  });
}
