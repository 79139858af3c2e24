/**
 * JSON's lexical part for the OTLP JSON scanner (`bounded_json.ts`):
 * stepping over strings, numbers and literals in UTF-8 bytes, checked as
 * `JSON.parse` would check them, or only delimited when a later
 * `JSON.parse` of the text around them will check them.
 *
 * @module
 */
import { ImportError } from "../importers/import_error.ts";

const ascii = new TextDecoder();

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Bad JSON, where.
 *
 * @param what What is wrong.
 * @param at Byte offset.
 * @returns The error.
 */
export function bad(what: string, at: number): ImportError {
  return new ImportError("file", `not JSON (${what} at byte ${at})`);
}

/**
 * Whether a byte is JSON whitespace.
 *
 * @param b The byte.
 * @returns Whether it is.
 */
export function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/**
 * Find the end of the string starting (with its quote) at `start`, without
 * checking it (a body already checked once).
 *
 * @param buf The bytes.
 * @param start Where its opening quote is.
 * @returns Where it ends (past its closing quote).
 * @throws {ImportError} When it has no closing quote.
 */
export function stringEnd(buf: Uint8Array, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = buf.indexOf(0x22, i);
    if (q < 0) throw bad("unterminated string", start);
    let slashes = 0;
    while (buf[q - 1 - slashes] === 0x5c) slashes++;
    i = q + 1;
    if (slashes % 2 === 0) return i;
  }
}

/**
 * Step over the string starting (with its quote) at `start`, checking its
 * escapes and characters.
 *
 * @param buf The bytes.
 * @param start Where its opening quote is.
 * @returns Where it ends (past its closing quote).
 * @throws {ImportError} When it is not a JSON string.
 */
export function skipString(buf: Uint8Array, start: number): number {
  let i = start + 1;
  for (;;) {
    if (i >= buf.length) throw bad("unterminated string", start);
    const b = buf[i];
    if (b === 0x22) return i + 1;
    if (b === 0x5c) {
      const e = buf[i + 1];
      if (e === 0x75) {
        for (let k = 2; k < 6; k++) {
          const h = buf[i + k] | 0x20;
          if (!((h >= 0x30 && h <= 0x39) || (h >= 0x61 && h <= 0x66))) {
            throw bad("bad \\u escape", i);
          }
        }
        i += 6;
      } else if (
        e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 ||
        e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74
      ) i += 2;
      else throw bad("bad escape", i);
    } else if (b < 0x20) throw bad("control character in a string", i);
    else i++;
  }
}

/**
 * Find the end of the number or literal at `start`, without checking it.
 *
 * @param buf The bytes.
 * @param start Where it begins.
 * @returns Where it ends.
 */
export function literalEnd(buf: Uint8Array, start: number): number {
  let i = start;
  while (i < buf.length) {
    const b = buf[i];
    if (b === 0x2c || b === 0x7d || b === 0x5d || isSpace(b)) break;
    i++;
  }
  return i;
}

/**
 * Step over the number or literal (`true`, `false`, `null`) at `start`,
 * checking it.
 *
 * @param buf The bytes.
 * @param start Where it begins.
 * @returns Where it ends.
 * @throws {ImportError} When it is neither.
 */
export function skipLiteral(buf: Uint8Array, start: number): number {
  const i = literalEnd(buf, start);
  const text = ascii.decode(buf.subarray(start, i));
  if (
    text !== "true" && text !== "false" && text !== "null" &&
    !NUMBER.test(text)
  ) throw bad(`unexpected ${JSON.stringify(text.slice(0, 20))}`, start);
  return i;
}
