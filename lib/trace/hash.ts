/**
 * SHA-256 helpers used by the hash chain and the blob store.
 *
 * @module
 */
import { hash } from "node:crypto";

/** Prefix of every digest string the harness writes: `sha256:<hex>`. */
export const DIGEST_PREFIX = "sha256:";

/**
 * The `prev_event_hash` of the first event of every capture: `sha256:`
 * followed by 64 zeros.
 */
export const GENESIS_HASH: string = DIGEST_PREFIX + "0".repeat(64);

/**
 * Hex SHA-256 of a string (as UTF-8) or bytes.
 *
 * @param data The text or bytes to hash.
 * @returns 64 lowercase hex characters.
 */
export function sha256Hex(data: string | Uint8Array): string {
  // One call, no Hash object (a stream) made and let go per digest.
  return hash("sha256", data, "hex");
}

/**
 * `sha256:<hex>` digest of a string (as UTF-8) or bytes.
 *
 * @param data The text or bytes to hash.
 * @returns The prefixed digest.
 */
export function sha256Digest(data: string | Uint8Array): string {
  return DIGEST_PREFIX + sha256Hex(data);
}

/**
 * Whether a string is a well-formed `sha256:<64 hex>` digest.
 *
 * @param value The string to test.
 * @returns True for a digest string.
 */
export function isDigest(value: unknown): value is string {
  return typeof value === "string" && /^sha256:[0-9a-f]{64}$/.test(value);
}
