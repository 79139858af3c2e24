/**
 * The identity of a conversation message as a client sends it again in its
 * next request: a hash of its canonical JSON with the marks hosts move taken
 * out. Claude Code moves `cache_control` from message to message, and the
 * message that loses it goes from one text block to the same text as a
 * string: cache marks are left out, and a content of one text block is
 * hashed as its text (the APIs read both alike).
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Hex } from "../trace/hash.ts";

/** Keys that say how to cache, not what was said. */
const CACHE_KEYS = new Set(["cache_control"]);

/** Whether a value holds a cache mark anywhere (most messages hold none). */
function hasCacheMarks(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasCacheMarks(v[i])) return true;
    return false;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (CACHE_KEYS.has(k)) return true;
    if (hasCacheMarks((v as Record<string, unknown>)[k])) return true;
  }
  return false;
}

function withoutCacheMarks(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutCacheMarks);
  if (typeof v !== "object" || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (!CACHE_KEYS.has(k)) out[k] = withoutCacheMarks(x);
  }
  return out;
}

/** `content: [{type: "text", text}]` as `content: text` (the APIs read both alike). */
function oneTextBlock(v: unknown): unknown {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
  const m = v as Record<string, unknown>;
  const c = m.content;
  if (!Array.isArray(c) || c.length !== 1) return v;
  const b = c[0];
  if (typeof b !== "object" || b === null || Array.isArray(b)) return v;
  const block = b as Record<string, unknown>;
  if (block.type !== "text" || typeof block.text !== "string") return v;
  for (const k in block) {
    if (k !== "type" && k !== "text" && !CACHE_KEYS.has(k)) return v;
  }
  return { ...m, content: block.text };
}

/**
 * Hash one message.
 *
 * @param message The message as sent.
 * @returns 64 hex digits.
 *
 * @example
 * ```ts
 * import { messageHash } from "./message_hash.ts";
 * import { equal, notEqual } from "node:assert/strict";
 * const a = { role: "user", content: [{ type: "text", text: "hi" }] };
 * const b = {
 *   role: "user",
 *   content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }],
 * };
 * equal(messageHash(a), messageHash(b));
 * equal(messageHash(a), messageHash({ role: "user", content: "hi" }));
 * notEqual(messageHash(a), messageHash({ role: "user", content: "bye" }));
 * ```
 */
export function messageHash(message: unknown): string {
  const m = oneTextBlock(message);
  return sha256Hex(
    canonicalJson(hasCacheMarks(m) ? withoutCacheMarks(m) : m),
  );
}

/**
 * The hash of a conversation's first messages given the hash of the ones
 * before and the next message's hash.
 *
 * @param before Hash of the prefix before (empty for none).
 * @param next The next message's hash.
 * @returns The prefix's hash.
 */
export function extendPrefix(before: string, next: string): string {
  return before === "" ? next : sha256Hex(`${before}:${next}`);
}
