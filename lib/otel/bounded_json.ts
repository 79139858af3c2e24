/**
 * OTLP JSON within caps, in steps, never holding the whole request as
 * objects: one `JSON.parse` of an 8 MiB body held the event loop ~50 ms
 * and the tree it built kept the garbage collector busy while the request
 * was recorded (`/health` waited up to 140 ms). The body is scanned here
 * byte by byte and checked as JSON (structure, strings and numbers outside
 * spans, UTF-8), 64 KiB a step; each span's text is parsed alone to weigh
 * it and dropped, and parsed again when its trace is mapped.
 *
 * A span of more than {@linkcode FIELDS_PER_ATTRIBUTE} times the per-span
 * cap in JSON values is refused unparsed, and so is every span past the
 * span cap. A resource's `resource` may come after its `scopeSpans`: spans
 * read before it wait for it (weighed, not parsed). JSON nested deeper
 * than {@linkcode MAX_JSON_DEPTH} levels is refused.
 *
 * @module
 */
import type { OtlpSpan, OtlpTraces } from "./otlp_types.ts";
import { ImportError } from "../importers/import_error.ts";
import {
  bad,
  isSpace,
  literalEnd,
  skipLiteral,
  skipString,
  stringEnd,
} from "./bounded_json_lex.ts";
import {
  type BoundedOtlp,
  FIELDS_PER_ATTRIBUTE,
  type OtlpCaps,
  type Range,
  SpanWeight,
  TraceGroups,
  weighJsonAttributes,
  weighJsonSpan,
} from "./bounded_caps.ts";

/** Deepest JSON nesting read (OTLP at its array cap nests ~110 levels). */
export const MAX_JSON_DEPTH = 512;

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** Bytes scanned per step. */
const STEP_BYTES = 64 * 1024;

// Where a value sits in an OTLP request.
const OTHER = 0;
const ROOT = 1;
const RS_LIST = 2;
const RS = 3;
const RESOURCE = 4;
const SS_LIST = 5;
const SS = 6;
const SPANS = 7;
const SPAN = 8;

// What the scanner expects next.
const VALUE = 0;
const VALUE_OR_END = 1;
const KEY = 2;
const KEY_OR_END = 3;
const COLON = 4;
const COMMA_OR_END = 5;
const DONE = 6;

type Resource = OtlpTraces["resourceSpans"][number]["resource"];

/** An open object or array. */
interface Frame {
  object: boolean;
  role: number;
  /** The key of the member being read (objects whose keys matter). */
  key: string;
}

/** A span weighed, waiting for its resource. */
interface Pending {
  range: Range;
  traceId: string;
  attributes: number;
  reason: string;
}

/** The role of a value opening with byte `c` in `parent`. */
function roleOf(parent: Frame | undefined, c: number, at: number): number {
  if (!parent) return c === 0x7b ? ROOT : OTHER;
  const list = (role: number, what: string) => {
    if (c === 0x5b) return role;
    if (c === 0x6e) return OTHER; // null
    throw new ImportError(
      "file",
      `OTLP JSON ${what} is not a list (byte ${at})`,
    );
  };
  switch (parent.role) {
    case ROOT:
      return parent.key === "resourceSpans" && c === 0x5b ? RS_LIST : OTHER;
    case RS_LIST:
      return c === 0x7b ? RS : OTHER;
    case RS:
      if (parent.key === "resource") return RESOURCE;
      return parent.key === "scopeSpans" ? list(SS_LIST, "scopeSpans") : OTHER;
    case SS_LIST:
      return c === 0x7b ? SS : OTHER;
    case SS:
      return parent.key === "spans" ? list(SPANS, "spans") : OTHER;
    case SPANS:
      return SPAN;
    default:
      return OTHER;
  }
}

/** Parse one value's text (a span, a resource, a key). */
function parseRange(r: Range): unknown {
  try {
    return JSON.parse(utf8Strict.decode(r.buf.subarray(r.start, r.stop)));
  } catch (err) {
    throw bad((err as Error).message, r.start);
  }
}

/** Parse spans kept as their text, one a step. */
function* parseSpans(ranges: Range[]): Generator<void, OtlpSpan[]> {
  const spans: OtlpSpan[] = [];
  for (const r of ranges) {
    spans.push(parseRange(r) as OtlpSpan);
    yield;
  }
  return spans;
}

/**
 * Read OTLP JSON within caps, in steps.
 *
 * @param bytes The body.
 * @param caps The caps, fresh for this request.
 * @returns The work; it returns the spans kept (by trace) and what the caps
 *   refused.
 * @throws {ImportError} When the body is not JSON, or not OTLP's shape.
 */
export function jsonSteps(
  bytes: Uint8Array,
  caps: OtlpCaps,
): Generator<void, BoundedOtlp> {
  return new JsonScan(bytes, caps).steps();
}

/** One request's scan: where it is, what it expects, what it has read. */
class JsonScan {
  readonly #buf: Uint8Array;
  readonly #caps: OtlpCaps;
  readonly #maxValues: number;
  readonly #traces = new TraceGroups(parseSpans);
  readonly #utf8 = new TextDecoder("utf-8", { fatal: true });
  readonly #stack: Frame[] = [];
  #at = 0;
  #want = VALUE;
  #checked = 0;
  #hasList = false;
  /** The span or resource being read: where it began, how deep. */
  #measured: { role: number; start: number; depth: number } | null = null;
  /** Values in it so far. */
  #values = 0;
  #spans = 0;
  /** A span ended since the last step. */
  #spanEnded = false;
  // The resource spans being read: its resource, once read, and the spans
  // read before it (past the span cap only counted).
  #resource: Resource | null = null;
  #resourceWhy = "";
  #pending: Pending[] = [];
  #overflow = 0;

  constructor(buf: Uint8Array, caps: OtlpCaps) {
    this.#buf = buf;
    this.#caps = caps;
    this.#maxValues = FIELDS_PER_ATTRIBUTE * caps.perSpan + 64;
  }

  *steps(): Generator<void, BoundedOtlp> {
    const buf = this.#buf;
    const n = buf.length;
    for (let next = STEP_BYTES;;) {
      while (this.#at < n && isSpace(buf[this.#at])) this.#at++;
      if (this.#at >= n) break;
      if (this.#at >= next || this.#spanEnded) {
        if (this.#at >= next) {
          this.#checkUtf8(this.#at);
          next = this.#at + STEP_BYTES;
        }
        this.#spanEnded = false;
        yield;
      }
      this.#token(buf[this.#at]);
    }
    if (this.#want !== DONE) throw bad("unexpected end", n);
    this.#checkUtf8(n);
    if (!this.#hasList) {
      throw new ImportError("file", "OTLP JSON has no resourceSpans list");
    }
    return this.#traces.result(this.#caps);
  }

  /** Read the token starting with byte `c`. */
  #token(c: number): void {
    const want = this.#want;
    const top = this.#stack[this.#stack.length - 1];
    if (want === VALUE || (want === VALUE_OR_END && c !== 0x5d)) {
      this.#value(c, top);
    } else if (want === VALUE_OR_END || (want === KEY_OR_END && c === 0x7d)) {
      this.#close();
    } else if (want === KEY || want === KEY_OR_END) {
      if (c !== 0x22) throw bad("expected a key", this.#at);
      const start = this.#at;
      this.#at = skipString(this.#buf, this.#at);
      if (top.role === ROOT || top.role === RS || top.role === SS) {
        top.key = String(
          parseRange({ buf: this.#buf, start, stop: this.#at }),
        );
      }
      this.#want = COLON;
    } else if (want === COLON) {
      if (c !== 0x3a) throw bad("expected ':'", this.#at);
      this.#at++;
      this.#want = VALUE;
    } else if (want === COMMA_OR_END) {
      if (c === 0x2c) {
        this.#at++;
        this.#want = top.object ? KEY : VALUE;
      } else if (c === (top.object ? 0x7d : 0x5d)) this.#close();
      else {
        throw bad(`expected ',' or '${top.object ? "}" : "]"}'`, this.#at);
      }
    } else throw bad("unexpected text after the end", this.#at);
  }

  /** A value begins with byte `c`. */
  #value(c: number, parent: Frame | undefined): void {
    const role = roleOf(parent, c, this.#at);
    if (role === RS_LIST) this.#hasList = true;
    if (role === RS) this.#openResourceSpans();
    if (!this.#measured && (role === SPAN || role === RESOURCE)) {
      this.#measured = { role, start: this.#at, depth: this.#stack.length };
      this.#values = 0;
    }
    if (this.#measured) this.#values++;
    if (c === 0x7b || c === 0x5b) {
      if (this.#stack.length >= MAX_JSON_DEPTH) {
        throw new ImportError(
          "file",
          `OTLP JSON nests deeper than ${MAX_JSON_DEPTH} levels (byte ${this.#at})`,
        );
      }
      this.#stack.push({ object: c === 0x7b, role, key: "" });
      this.#at++;
      this.#want = c === 0x7b ? KEY_OR_END : VALUE_OR_END;
    } else {
      // A body measured once (its spans counted) is not checked again.
      const buf = this.#buf;
      const at = this.#at;
      this.#at = c === 0x22
        ? (this.#measured ? stringEnd(buf, at) : skipString(buf, at))
        : (this.#measured ? literalEnd(buf, at) : skipLiteral(buf, at));
      this.#ended();
    }
  }

  /** A value ended at `#at`. */
  #ended(): void {
    const m = this.#measured;
    if (m && this.#stack.length === m.depth) {
      this.#measured = null;
      const range = { buf: this.#buf, start: m.start, stop: this.#at };
      if (m.role === RESOURCE) this.#resourceRead(range);
      else this.#spanRead(range);
    }
    this.#want = this.#stack.length ? COMMA_OR_END : DONE;
  }

  #close(): void {
    const frame = this.#stack.pop()!;
    this.#at++;
    if (frame.role === RS && this.#resource === null) {
      this.#resourceFound({ attributes: [] });
    }
    this.#ended();
  }

  #openResourceSpans(): void {
    this.#resource = null;
    this.#resourceWhy = "";
  }

  #resourceRead(range: Range): void {
    if (this.#values > this.#maxValues) {
      this.#resourceWhy =
        `whose resource has more than ${this.#maxValues} JSON values`;
      this.#resourceFound({ attributes: [] });
      return;
    }
    const r = parseRange(range) as Resource | null;
    const w = new SpanWeight(this.#caps.perSpan);
    weighJsonAttributes(r?.attributes, w);
    if (w.over) this.#resourceWhy = `whose resource has ${w.why()}`;
    this.#resourceFound(
      !w.over && r && typeof r === "object" ? r : { attributes: [] },
    );
  }

  /** The resource is known: the spans read before it are taken now. */
  #resourceFound(resource: Resource): void {
    this.#resource = resource;
    this.#traces.open(resource);
    for (const p of this.#pending) this.#take(p);
    for (; this.#overflow > 0; this.#overflow--) this.#take(null);
    this.#pending = [];
  }

  /** Take a span, or refuse it (null: past the span cap, unweighed). */
  #take(p: Pending | null): void {
    if (!p) {
      this.#caps.take(0);
      return;
    }
    const reason = this.#resourceWhy || p.reason;
    if (this.#caps.take(reason ? null : p.attributes, reason)) {
      this.#traces.add(p.traceId, p.range);
    }
  }

  #spanRead(range: Range): void {
    this.#spanEnded = true;
    let p: Pending | null = null;
    if (++this.#spans > this.#caps.spans) {
      // Past the span cap: refused whatever it weighs.
    } else if (this.#values > this.#maxValues) {
      p = {
        range,
        traceId: "",
        attributes: 0,
        reason: `with more than ${this.#maxValues} JSON values`,
      };
    } else {
      const span = parseRange(range) as OtlpSpan;
      const w = new SpanWeight(this.#caps.perSpan);
      weighJsonSpan(span, w);
      const id = span?.traceId;
      p = {
        range,
        traceId: typeof id === "string" ? id.toLowerCase() : "",
        attributes: w.attributes,
        reason: w.over ? `with ${w.why()}` : "",
      };
    }
    if (this.#resource !== null) this.#take(p);
    else if (p) this.#pending.push(p);
    else this.#overflow++;
  }

  #checkUtf8(to: number): void {
    try {
      this.#utf8.decode(this.#buf.subarray(this.#checked, to), {
        stream: to < this.#buf.length,
      });
    } catch {
      throw new ImportError(
        "file",
        `not JSON (invalid UTF-8 before byte ${to})`,
      );
    }
    this.#checked = to;
  }
}
