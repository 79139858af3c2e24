/**
 * Line-delimited JSON-RPC as MCP's stdio transport frames it, read with a
 * bound on each message. Bytes are split on `\n` as they arrive (each byte
 * is looked at once; the SDK's reader copies its whole buffer per chunk). A
 * line over the limit is dropped as it streams by, keeping only its first
 * and last few KiB, enough to read its `id`; a line that is not a JSON-RPC
 * message is reported with what it said. Nothing here throws on input.
 *
 * @module
 */
import { DEFAULT_MAX_MESSAGE_BYTES } from "./message_limit.ts";

/** A JSON-RPC request id. */
export type JsonRpcId = string | number;

/** A JSON-RPC 2.0 message (request, notification, result or error). */
export interface JsonRpcMessage {
  /** Always "2.0". */
  jsonrpc: "2.0";
  /** Request id (requests and responses). */
  id?: JsonRpcId;
  /** Method (requests and notifications). */
  method?: string;
  /** Parameters. */
  params?: { [key: string]: unknown };
  /** Result (responses). */
  result?: { [key: string]: unknown };
  /** Error (error responses). */
  error?: { code: number; message: string; data?: unknown };
}

/** What one line turned out to be. */
export type Frame =
  | { kind: "message"; message: JsonRpcMessage; bytes: number }
  | {
    kind: "oversized";
    bytes: number;
    /** Its id when the kept head or tail shows it. */
    id: JsonRpcId | null;
    /** Top-level keys seen at its head ("method" marks a request). */
    keys: string[];
  }
  | {
    kind: "junk";
    bytes: number;
    /** Its first characters. */
    text: string;
    /** Why it is not a message: "not JSON" or "not a JSON-RPC 2.0 message". */
    reason: string;
  };

/** Bytes kept from each end of a line over the limit. */
const KEEP = 4096;
/** Characters of a junk line kept to quote. */
const QUOTE = 200;

const decoder = new TextDecoder();

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Splits a byte stream into JSON-RPC messages, each at most `maxBytes`. */
export class JsonLineReader {
  /** The limit of one message, in bytes. */
  readonly maxBytes: number;
  #parts: Uint8Array[] = [];
  #bytes = 0;
  #head: Uint8Array | null = null;
  #tail = new Uint8Array(0);

  /**
   * Create a `JsonLineReader`.
   *
   * @param maxBytes The limit of one message.
   */
  constructor(maxBytes: number = DEFAULT_MAX_MESSAGE_BYTES) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
      throw new RangeError(
        `The message limit must be a positive whole number of bytes, got ${maxBytes}`,
      );
    }
    this.maxBytes = maxBytes;
  }

  /** Bytes of a line begun and not yet ended. */
  get partialBytes(): number {
    return this.#bytes;
  }

  /** The first characters of a line begun and not yet ended. */
  get partialText(): string {
    const head = this.#head ?? concat(this.#parts, this.#bytes);
    return decoder.decode(head.subarray(0, QUOTE * 4)).slice(0, QUOTE);
  }

  /**
   * Take the next bytes.
   *
   * @param chunk Bytes as read.
   * @returns The lines they completed.
   */
  push(chunk: Uint8Array): Frame[] {
    const out: Frame[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      this.#take(chunk.subarray(start, nl < 0 ? chunk.length : nl));
      if (nl < 0) break;
      const frame = this.#finish();
      if (frame) out.push(frame);
      start = nl + 1;
    }
    return out;
  }

  /**
   * The stream ended: a last line without its newline is read as a line.
   *
   * @returns That line's frame, if any.
   */
  end(): Frame[] {
    const frame = this.#bytes > 0 ? this.#finish() : null;
    return frame ? [frame] : [];
  }

  #take(seg: Uint8Array): void {
    if (seg.length === 0) return;
    if (this.#head === null && this.#bytes + seg.length <= this.maxBytes) {
      this.#parts.push(seg);
      this.#bytes += seg.length;
      return;
    }
    if (this.#head === null) {
      const all = concat([...this.#parts, seg], this.#bytes + seg.length);
      this.#head = all.slice(0, KEEP);
      this.#tail = all.slice(Math.max(0, all.length - KEEP));
      this.#parts = [];
    } else if (seg.length >= KEEP) {
      this.#tail = seg.slice(seg.length - KEEP);
    } else {
      const t = concat([this.#tail, seg], this.#tail.length + seg.length);
      this.#tail = t.slice(Math.max(0, t.length - KEEP));
    }
    this.#bytes += seg.length;
  }

  #finish(): Frame | null {
    const bytes = this.#bytes;
    const head = this.#head;
    const parts = this.#parts;
    this.#parts = [];
    this.#bytes = 0;
    this.#head = null;
    if (head !== null) {
      const tail = this.#tail;
      this.#tail = new Uint8Array(0);
      const h = peekHead(decoder.decode(head));
      const id = h.id ?? peekTailId(decoder.decode(tail));
      return { kind: "oversized", bytes, id, keys: h.keys };
    }
    let text = decoder.decode(concat(parts, bytes));
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim() === "") return null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return {
        kind: "junk",
        bytes,
        text: text.slice(0, QUOTE),
        reason: "not JSON",
      };
    }
    if (
      typeof value !== "object" || value === null || Array.isArray(value) ||
      (value as { jsonrpc?: unknown }).jsonrpc !== "2.0"
    ) {
      return {
        kind: "junk",
        bytes,
        text: text.slice(0, QUOTE),
        reason: "not a JSON-RPC 2.0 message",
      };
    }
    return { kind: "message", message: value as JsonRpcMessage, bytes };
  }
}

const STRING = /^"(?:[^"\\]|\\.)*"/;
const SCALAR = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/;

/**
 * The top-level keys at the head of a cut JSON object, up to the first
 * value that is an object or array (or the cut), and the `id` if it came
 * before that.
 */
function peekHead(text: string): { keys: string[]; id?: JsonRpcId } {
  const keys: string[] = [];
  let id: JsonRpcId | undefined;
  let s = text.trimStart();
  if (!s.startsWith("{")) return { keys };
  s = s.slice(1);
  for (;;) {
    s = s.trimStart();
    const k = STRING.exec(s);
    if (!k) break;
    const key = JSON.parse(k[0]) as string;
    keys.push(key);
    s = s.slice(k[0].length).trimStart();
    if (!s.startsWith(":")) break;
    s = s.slice(1).trimStart();
    const v = STRING.exec(s) ?? SCALAR.exec(s);
    if (!v) break;
    if (key === "id") {
      const parsed = JSON.parse(v[0]);
      if (typeof parsed === "string" || typeof parsed === "number") {
        id = parsed;
      }
    }
    s = s.slice(v[0].length).trimStart();
    if (!s.startsWith(",")) break;
    s = s.slice(1);
  }
  return id === undefined ? { keys } : { keys, id };
}

/**
 * The `id` of a cut JSON object when it is the object's last member, or the
 * last but `"jsonrpc": "2.0"` (how the MCP SDK writes its messages).
 */
const TAIL_ID =
  /[,{]\s*"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/;

function peekTailId(text: string): JsonRpcId | null {
  const m = TAIL_ID.exec(text.replace(/\r$/, ""));
  if (!m) return null;
  const v = JSON.parse(m[1]);
  return typeof v === "string" || typeof v === "number" ? v : null;
}
