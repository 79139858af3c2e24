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
import { Buffer } from "node:buffer";
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
  // Lengths are measured on plain JSON: a JSON value's canonical form has
  // the same characters in another key order, so the same length, and the
  // native writer needs no sort (nor a walk in script).
  if (jsonLength(payload) <= threshold) return payload;
  const out: Payload = {};
  for (const [key, value] of Object.entries(payload)) {
    out[key] = externalize(value, put, threshold).value;
  }
  return out;
}

/** A value after the size rule, the length of its JSON, and the original's. */
interface Sized {
  value: unknown;
  len: number;
  orig: number;
}

/**
 * The size rule on one value, in one pass from the leaves up: each node's
 * length is made from its children's, so no subtree is serialized again at
 * every level above it. A node within the threshold is kept as it was (no
 * child of it can have gone to a blob: each is shorter still).
 */
function externalize(
  value: unknown,
  put: PutBlob,
  threshold: number,
): Sized {
  if (typeof value === "string") {
    const len = jsonLength(value);
    if (value.length + 2 <= threshold) return { value, len, orig: len };
    return sized(ref(put(value), "text", utf8Length(value)), len);
  }
  if (typeof value !== "object" || value === null) {
    const len = jsonLength(value);
    return { value, len, orig: len };
  }
  if (!Array.isArray(value) && !isPlain(value)) {
    return externalizeOther(value, put, threshold);
  }
  let reduced: unknown;
  let orig: number;
  let len: number;
  if (Array.isArray(value)) {
    const items = new Array(value.length);
    orig = len = 1 + Math.max(1, value.length);
    for (let i = 0; i < value.length; i++) {
      const r = externalize(value[i], put, threshold);
      items[i] = r.value;
      orig += r.orig;
      len += r.len;
    }
    reduced = items;
  } else {
    const obj: Record<string, unknown> = {};
    let members = 0;
    orig = len = 2;
    for (const [k, v] of Object.entries(value)) {
      const r = externalize(v, put, threshold);
      obj[k] = r.value;
      if (r.value === undefined) continue; // left out, as JSON does
      const around = jsonLength(k) + 1 + (members++ > 0 ? 1 : 0);
      orig += around + r.orig;
      len += around + r.len;
    }
    reduced = obj;
  }
  if (orig <= threshold) return { value, len: orig, orig };
  if (len <= threshold) return { value: reduced, len, orig };
  // Store the original value whole: one blob instead of many small refs.
  const text = canonicalJson(value);
  return sized(ref(put(text), "json", utf8Length(text)), orig);
}

/**
 * The size rule on an object JSON does not write as its own members (a
 * `toJSON` method, a class's prototype), measured on its canonical JSON.
 */
function externalizeOther(
  value: object,
  put: PutBlob,
  threshold: number,
): Sized {
  const text = canonicalJson(value);
  const orig = text.length;
  if (orig <= threshold) return { value, len: orig, orig };
  const obj: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    obj[k] = externalize(v, put, threshold).value;
  }
  const len = canonicalJson(obj).length;
  if (len <= threshold) return { value: obj, len, orig };
  return sized(ref(put(text), "json", utf8Length(text)), orig);
}

/** Whether JSON writes an object as its own members (no `toJSON`, a plain prototype). */
function isPlain(value: object): boolean {
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return false;
  }
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Bytes of a string's UTF-8 (a lone surrogate as U+FFFD), without encoding it. */
function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Characters of a value's JSON (0 for what JSON leaves out). */
function jsonLength(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

function sized(r: BlobRef, orig: number): Sized {
  return { value: r, len: jsonLength(r), orig };
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
