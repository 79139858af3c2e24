/**
 * {@linkcode parseAnswerHead}: an upstream answer's status line and header
 * fields, read strictly enough to frame the body (RFC 9112), into
 * {@linkcode AnswerFields} (the part of `Headers` the gateway reads).
 *
 * @module
 */

/** The header fields of an answer, by lower-case name (the part of `Headers` the gateway reads). */
export interface HeaderView {
  /**
   * A field's value (repeated fields joined with `, `), or null.
   *
   * @param name Its name.
   */
  get(name: string): string | null;
  /**
   * Whether the answer has the field.
   *
   * @param name Its name.
   */
  has(name: string): boolean;
  /**
   * Call `fn` for each field (lower-case names).
   *
   * @param fn Called with the value and the name.
   */
  forEach(fn: (value: string, name: string) => void): void;
}

/** Header fields, lower-case names, repeated ones joined as `Headers` does. */
export class AnswerFields implements HeaderView {
  readonly #map = new Map<string, string>();

  /**
   * Add a field.
   *
   * @param name Its lower-case name.
   * @param value Its value.
   */
  add(name: string, value: string): void {
    const had = this.#map.get(name);
    this.#map.set(name, had === undefined ? value : `${had}, ${value}`);
  }

  /** {@inheritDoc HeaderView.get} */
  get(name: string): string | null {
    return this.#map.get(name.toLowerCase()) ?? null;
  }

  /** {@inheritDoc HeaderView.has} */
  has(name: string): boolean {
    return this.#map.has(name.toLowerCase());
  }

  /** {@inheritDoc HeaderView.forEach} */
  forEach(fn: (value: string, name: string) => void): void {
    for (const [k, v] of this.#map) fn(v, k);
  }
}

/** An answer's head. */
export interface AnswerHead {
  /** The status code. */
  status: number;
  /** HTTP/1.1 (else 1.0). */
  http11: boolean;
  /** The header fields. */
  headers: AnswerFields;
}

/** Most header fields an answer may have. */
const MAX_FIELDS = 256;

/** A field name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The upstream's answer is not HTTP/1.x as RFC 9112 frames it. */
export class MalformedAnswerError extends Error {
  /**
   * Create a `MalformedAnswerError`.
   *
   * @param what What is wrong.
   */
  constructor(what: string) {
    super(`The upstream's answer is not valid HTTP/1.1: ${what}`);
    this.name = "MalformedAnswerError";
  }
}

/**
 * Parse an answer head (without its blank line).
 *
 * @param text The head as text.
 * @returns The status and the fields.
 * @throws {MalformedAnswerError} A malformed status line or field.
 */
export function parseAnswerHead(text: string): AnswerHead {
  const lines = text.split("\r\n");
  const m = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0]);
  if (!m) {
    throw new MalformedAnswerError(
      `the status line is ${JSON.stringify(lines[0].slice(0, 80))}`,
    );
  }
  if (lines.length - 1 > MAX_FIELDS) {
    throw new MalformedAnswerError(`more than ${MAX_FIELDS} header fields`);
  }
  const headers = new AnswerFields();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) {
      throw new MalformedAnswerError(
        `the header line ${JSON.stringify(line.slice(0, 80))}`,
      );
    }
    headers.add(name.toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(m[2]), http11: m[1] === "1", headers };
}
