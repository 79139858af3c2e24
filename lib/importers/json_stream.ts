/**
 * Reading a large JSON document a piece at a time, so an importer's memory
 * follows the largest trajectory, not the file: a top-level list yields its
 * elements one by one; a top-level object yields its members whole, except
 * the list under one named key (τ²'s `simulations`), whose elements come one
 * by one. Each piece is parsed with `JSON.parse`, which checks its syntax;
 * the scanner only finds where pieces start and end (strings, escapes and
 * bracket depth), so a document it accepts is one `JSON.parse` accepts too.
 * A leading UTF-8 byte-order mark is skipped.
 *
 * @module
 */
import { ImportError } from "./import_error.ts";

/** One piece of a streamed document. */
export type JsonPiece =
  | {
    /** A member of a top-level object (outside the streamed list), whole. */
    kind: "member";
    /** Its key. */
    key: string;
    /** Its value. */
    value: unknown;
  }
  | {
    /** The streamed list starts (before its elements, if any). */
    kind: "list";
    /** Its key, or null for a top-level list. */
    key: string | null;
  }
  | {
    /** An element of the streamed list. */
    kind: "item";
    /** The key of the list, or null for a top-level list. */
    key: string | null;
    /** Its position in the list. */
    index: number;
    /** Its value. */
    value: unknown;
  };

/** What {@linkcode streamJson} reads. */
export interface StreamJsonOptions {
  /** The key of the top-level object whose list is read element by element. */
  listKey: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const BOM = [0xef, 0xbb, 0xbf];

function isBlank(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** Bytes of one piece, gathered over chunks. */
class Gather {
  #parts: Uint8Array[] = [];
  #length = 0;

  add(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#parts.push(bytes.slice());
    this.#length += bytes.length;
  }

  get empty(): boolean {
    return this.#length === 0;
  }

  take(decoder: TextDecoder): string {
    const all = this.#parts.length === 1
      ? this.#parts[0]
      : new Uint8Array(this.#length);
    if (this.#parts.length !== 1) {
      let at = 0;
      for (const p of this.#parts) {
        all.set(p, at);
        at += p.length;
      }
    }
    this.#parts = [];
    this.#length = 0;
    return decoder.decode(all);
  }
}

function parsePiece(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ImportError(where, `not JSON (${(err as Error).message})`);
  }
}

/**
 * Read a JSON document from chunks of bytes, a piece at a time.
 *
 * @param chunks The document's bytes, in order.
 * @param options The key whose list is read element by element.
 * @returns The pieces, in document order.
 * @throws {ImportError} When the document is not JSON, or not an object or a list.
 */
export async function* streamJson(
  chunks: AsyncIterable<Uint8Array>,
  options: StreamJsonOptions,
): AsyncGenerator<JsonPiece> {
  const decoder = new TextDecoder();
  const gather = new Gather();
  /** Bytes of a leading byte-order mark seen (it may span chunks). */
  let bom = 0;
  let top: "object" | "list" | null = null;
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** Depth at which the pieces being gathered live (1 or 2), 0: none. */
  let level = 0;
  /** Inside the object at depth 1: gathering a key, or a value. */
  let memberPart: "key" | "value" = "key";
  let key = "";
  let listKey: string | null = null;
  let index = 0;
  let done = false;
  for await (const chunk of chunks) {
    const pieces: JsonPiece[] = [];
    /** Start, in this chunk, of the piece being gathered (-1: none yet). */
    let start = level > 0 && !gather.empty ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) inString = false;
        continue;
      }
      if (top === null && bom < 3 && b === BOM[bom]) {
        bom++;
        continue;
      }
      if (isBlank(b)) continue;
      if (done) {
        throw new ImportError("file", "not JSON (more after the document)");
      }
      if (top === null) {
        if (b === OPEN_OBJECT) top = "object";
        else if (b === OPEN_LIST) top = "list";
        else throw new ImportError("file", "not JSON (expected { or [)");
        depth = 1;
        level = 1;
        if (top === "list") pieces.push({ kind: "list", key: null });
        continue;
      }
      // A piece starts at its first byte at its level.
      if (start < 0 && depth === level && b !== COMMA && b !== COLON) {
        const closing = b === CLOSE_OBJECT || b === CLOSE_LIST;
        if (!closing) start = i;
      }
      if (b === QUOTE) {
        inString = true;
        continue;
      }
      if (b === OPEN_OBJECT || b === OPEN_LIST) {
        if (
          top === "object" && depth === 1 && memberPart === "value" &&
          key === options.listKey && b === OPEN_LIST && gather.empty &&
          start === i
        ) {
          // The streamed list: its elements are the pieces now.
          listKey = key;
          level = 2;
          start = -1;
          index = 0;
          pieces.push({ kind: "list", key });
        }
        depth++;
        continue;
      }
      const closes = b === CLOSE_OBJECT || b === CLOSE_LIST;
      const ends = (b === COMMA && depth === level) ||
        (closes && depth === level) ||
        (b === COLON && depth === 1 && top === "object" &&
          memberPart === "key" && level === 1);
      if (ends && start >= 0) {
        gather.add(chunk.subarray(start, i));
        const text = gather.take(decoder);
        start = -1;
        if (level === 2 || top === "list") {
          pieces.push({
            kind: "item",
            key: listKey,
            index,
            value: parsePiece(text, `${listKey ?? "list"} item ${index}`),
          });
          index++;
        } else if (memberPart === "key") {
          if (b !== COLON) {
            throw new ImportError("file", "not JSON (a key without a value)");
          }
          key = String(parsePiece(text, "file"));
          memberPart = "value";
        } else {
          pieces.push({
            kind: "member",
            key,
            value: parsePiece(text, `member ${JSON.stringify(key)}`),
          });
          memberPart = "key";
        }
      } else if (
        ends && (b === COLON || memberPart === "value") && level === 1 &&
        top === "object"
      ) {
        throw new ImportError(
          "file",
          b === COLON
            ? "not JSON (a member without a key)"
            : `not JSON (member ${JSON.stringify(key)} has no value)`,
        );
      }
      if (closes) {
        depth--;
        if (level === 2 && depth === 1) {
          // The streamed list ended: back to the object's members.
          level = 1;
          memberPart = "key";
        }
        if (depth === 0) done = true;
      } else if (
        b === COMMA && depth === 1 && level === 1 && top === "object"
      ) {
        memberPart = "key";
      }
    }
    if (start >= 0) gather.add(chunk.subarray(start));
    yield* pieces;
  }
  if (!done) {
    throw new ImportError(
      "file",
      top === null
        ? "not JSON (empty)"
        : "not JSON (the document is cut short)",
    );
  }
}
