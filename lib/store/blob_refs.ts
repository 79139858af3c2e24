/**
 * The size rule that moves large payload values into blobs, and the reverse.
 *
 * Rule: when the canonical JSON of an event's payload is longer than the
 * threshold (default {@linkcode DEFAULT_BLOB_THRESHOLD}), each value inside
 * the payload whose canonical JSON is longer than the threshold is replaced
 * by a blob reference, children first: an object or array is stored whole
 * only if it is still over the threshold once its large children became
 * references. The payload's own top-level keys stay inline. A reference is
 * `{"$blob": "sha256:<hex>", "encoding": "text" | "json", "size": <bytes>}`;
 * the event hash covers the reference and so, through the digest, the
 * content.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { isDigest } from "../trace/hash.ts";
import type { Payload } from "../trace/event.ts";

/** Default threshold, in characters of canonical JSON. */
export const DEFAULT_BLOB_THRESHOLD = 16_384;

/** A reference to a value stored as a blob. */
export interface BlobRef {
  /** Digest of the blob. */
  $blob: string;
  /** `text`: a string stored as UTF-8; `json`: a value stored as canonical JSON. */
  encoding: "text" | "json";
  /** Size of the blob in bytes. */
  size: number;
}

/**
 * Whether a value is a blob reference.
 *
 * @param value Any value.
 * @returns True for `{"$blob", "encoding", "size"}` with a valid digest.
 */
export function isBlobRef(value: unknown): value is BlobRef {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return false;
  }
  const v = value as Record<string, unknown>;
  return isDigest(v.$blob) &&
    (v.encoding === "text" || v.encoding === "json") &&
    typeof v.size === "number" && Object.keys(v).length === 3;
}

/** Writes a blob and returns its digest. */
export type PutBlob = (data: string) => string;
/** Reads a blob as text. */
export type GetBlobText = (digest: string) => string;

const encoder = new TextEncoder();

/**
 * Apply the size rule to a payload.
 *
 * @param payload The event payload.
 * @param put Blob writer.
 * @param threshold Characters of canonical JSON above which values move out.
 * @returns The payload itself when small, else a copy with references.
 */
export function externalizePayload(
  payload: Payload,
  put: PutBlob,
  threshold: number = DEFAULT_BLOB_THRESHOLD,
): Payload {
  if (canonicalJson(payload).length <= threshold) return payload;
  const out: Payload = {};
  for (const [key, value] of Object.entries(payload)) {
    out[key] = externalize(value, put, threshold);
  }
  return out;
}

function externalize(
  value: unknown,
  put: PutBlob,
  threshold: number,
): unknown {
  if (typeof value === "string") {
    if (value.length + 2 <= threshold) return value;
    const bytes = encoder.encode(value);
    return ref(put(value), "text", bytes.length);
  }
  if (typeof value !== "object" || value === null) return value;
  const text = canonicalJson(value);
  if (text.length <= threshold) return value;
  let reduced: unknown;
  if (Array.isArray(value)) {
    reduced = value.map((v) => externalize(v, put, threshold));
  } else {
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      obj[k] = externalize(v, put, threshold);
    }
    reduced = obj;
  }
  const reducedText = canonicalJson(reduced);
  if (reducedText.length <= threshold) return reduced;
  // Store the original value whole: one blob instead of many small refs.
  return ref(put(text), "json", encoder.encode(text).length);
}

function ref(digest: string, encoding: "text" | "json", size: number): BlobRef {
  return { $blob: digest, encoding, size };
}

/**
 * Replace every blob reference in a value by the stored content.
 *
 * @param value A payload or part of one.
 * @param get Blob reader.
 * @returns The value with references resolved (unchanged parts are shared).
 */
export function resolveBlobRefs<T>(value: T, get: GetBlobText): T {
  return resolve(value, get) as T;
}

function resolve(value: unknown, get: GetBlobText): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (isBlobRef(value)) {
    const text = get(value.$blob);
    return value.encoding === "text" ? text : JSON.parse(text);
  }
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = resolve(v, get);
      if (r !== v) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const r = resolve(v, get);
    if (r !== v) changed = true;
    out[k] = r;
  }
  return changed ? out : value;
}
