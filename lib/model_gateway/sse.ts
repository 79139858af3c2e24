/**
 * {@linkcode SseParser}: server-sent events read from the bytes of a
 * stream as they pass through (the bytes themselves go on unchanged).
 *
 * @module
 */

/** Largest event kept (a longer one is dropped, the stream still relayed). */
const MAX_EVENT_CHARS = 8 * 1024 * 1024;

/** Reads `event:` / `data:` lines into events. */
export class SseParser {
  readonly #decoder = new TextDecoder();
  readonly #onEvent: (event: string | null, data: string) => void;
  #rest = "";
  #event: string | null = null;
  #data: string[] = [];
  #size = 0;

  /**
   * Create an `SseParser`.
   *
   * @param onEvent Called per complete event.
   *
   * @example
   * ```ts
   * import { SseParser } from "./sse.ts";
   * import { deepEqual } from "node:assert/strict";
   * const got: [string | null, string][] = [];
   * const p = new SseParser((e, d) => got.push([e, d]));
   * p.push(new TextEncoder().encode("event: a\ndata: {\"x\""));
   * p.push(new TextEncoder().encode(":1}\r\n\r\ndata: [DONE]\n\n"));
   * deepEqual(got, [["a", '{"x":1}'], [null, "[DONE]"]]);
   * ```
   */
  constructor(onEvent: (event: string | null, data: string) => void) {
    this.#onEvent = onEvent;
  }

  /**
   * Take the next bytes of the stream.
   *
   * @param bytes As they arrived.
   */
  push(bytes: Uint8Array): void {
    const text = this.#rest + this.#decoder.decode(bytes, { stream: true });
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      this.#line(text.slice(start, end));
      start = nl + 1;
    }
    this.#rest = text.slice(start);
    if (this.#rest.length > MAX_EVENT_CHARS) this.#rest = "";
  }

  /** The stream ended: dispatch what is pending. */
  end(): void {
    if (this.#rest) this.#line(this.#rest);
    this.#rest = "";
    this.#line("");
  }

  #line(line: string): void {
    if (line === "") {
      if (this.#data.length > 0) {
        this.#onEvent(this.#event, this.#data.join("\n"));
      }
      this.#event = null;
      this.#data = [];
      this.#size = 0;
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") {
      this.#size += value.length;
      if (this.#size <= MAX_EVENT_CHARS) this.#data.push(value);
    }
  }
}
