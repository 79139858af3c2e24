/**
 * The chain check of a JSONL spool (one canonical event per line,
 * `\n`-terminated, in sequence order; the lines are split by `lines.ts`).
 * {@linkcode verifyChain} walks a spool as a stream (constant memory whatever
 * its size) and reports the first line whose sequence, self-hash or link is
 * broken.
 *
 * @module
 */
import type { TraceEvent } from "./event.ts";
import { DIGEST_PREFIX, GENESIS_HASH, sha256Hex } from "./hash.ts";
import { computeEventHash } from "./chain.ts";
import { splitLines, type SpoolLine } from "./lines.ts";

/** What kind of break a chain check found. */
export type ChainProblemKind =
  | "truncated"
  | "rewritten"
  | "syntax"
  | "capture"
  | "sequence"
  | "self_hash"
  | "link"
  | "torn_tail";

/** The first break found in a spool. */
export interface ChainProblem {
  /** What broke. */
  kind: ChainProblemKind;
  /** The sequence the line should have had. */
  sequence: number;
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line. */
  byte_offset: number;
  /** A sentence saying what is wrong. */
  message: string;
}

/** Result of a chain check. */
export interface ChainReport {
  /** True when every line verified. */
  ok: boolean;
  /** Lines that verified before the first problem. */
  events: number;
  /** Bytes of verified lines. */
  bytes: number;
  /** Last verified sequence (0 for an empty spool). */
  head_sequence: number;
  /** Hash of the last verified event (genesis for an empty spool). */
  head_hash: string;
  /** The first problem, or null. */
  problem: ChainProblem | null;
  /** Hashes of the sequences asked for in `anchors`. */
  hashes_at?: Record<number, string>;
}

const HASH_MEMBER = '"event_hash":"' + DIGEST_PREFIX;
const HASH_MEMBER_LEN = 14 + 71 + 2; // "event_hash":"sha256:<64>",
const SEQ_MEMBER = '"sequence":';
const PREV_MEMBER = '"prev_event_hash":"';
const CAP_MEMBER = '"capture_id":"';

/** Options of {@linkcode verifyChain}. */
export interface VerifyChainOptions {
  /** Capture id every line must carry; unchecked when absent. */
  captureId?: string;
  /** Sequences whose hashes the report should give (`hashes_at`). */
  anchors?: number[];
}

/**
 * Verify a spool as a stream: each line's self-hash, its sequence (1, 2, …)
 * and its link to the previous line. Stops at the first problem. Lines are
 * checked in their canonical form: the `event_hash` member is cut out of the
 * line bytes and the rest is hashed, so nothing is re-serialized.
 *
 * @param chunks The spool's bytes.
 * @param options Expected capture id.
 * @returns The report, with the first problem if any.
 */
export async function verifyChain(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: VerifyChainOptions = {},
): Promise<ChainReport> {
  // Fatal: bytes that are not UTF-8 are a broken line, not U+FFFD.
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let sequence = 0;
  let head = GENESIS_HASH;
  let bytes = 0;
  const wanted = options.anchors?.length ? new Set(options.anchors) : null;
  const hashesAt: Record<number, string> = {};
  const report = (
    kind: ChainProblemKind,
    at: SpoolLine,
    message: string,
  ): ChainReport => ({
    ok: false,
    events: sequence,
    bytes,
    head_sequence: sequence,
    head_hash: head,
    problem: {
      kind,
      sequence: sequence + 1,
      line: at.lineNumber,
      byte_offset: at.offset,
      message,
    },
  });
  for await (const at of splitLines(chunks)) {
    const expected = sequence + 1;
    if (!at.terminated) {
      return report(
        "torn_tail",
        at,
        `Line ${at.lineNumber} has no newline: a write was cut off (open the store to repair it)`,
      );
    }
    let line: string;
    try {
      line = decoder.decode(at.bytes);
    } catch {
      return report(
        "syntax",
        at,
        `Line ${at.lineNumber} is not valid UTF-8: its bytes were altered`,
      );
    }
    const checked = checkLine(line, {
      sequence: expected,
      prev: head,
      captureId: options.captureId,
    });
    if (typeof checked !== "string") {
      return report(checked.kind, at, checked.message);
    }
    sequence = expected;
    head = checked;
    bytes += at.bytes.length + 1;
    if (wanted?.has(sequence)) hashesAt[sequence] = head;
  }
  return {
    ok: true,
    events: sequence,
    bytes,
    head_sequence: sequence,
    head_hash: head,
    problem: null,
    ...(wanted ? { hashes_at: hashesAt } : {}),
  };
}

/**
 * Check one canonical line against the expected sequence and previous hash.
 *
 * @param line The line without its newline.
 * @param link What it must carry: its sequence, the hash it links to and,
 *   when given, its capture.
 * @returns Its event hash, or the problem.
 */
export function checkLine(
  line: string,
  link: { sequence: number; prev: string; captureId?: string },
): string | { kind: ChainProblemKind; message: string } {
  const { sequence: expected, prev, captureId } = link;
  const hs = line.indexOf(HASH_MEMBER);
  const valid = hs > 0 &&
    line.startsWith('"event_id":', hs + HASH_MEMBER_LEN) &&
    line.charCodeAt(hs + HASH_MEMBER_LEN - 2) === 34 && // closing quote
    line.charCodeAt(hs + HASH_MEMBER_LEN - 1) === 44; // and its comma
  if (!valid) return slowCheck(line, expected, prev, captureId);
  const claimed = line.slice(hs + 14, hs + 14 + 71);
  const body = line.slice(0, hs) + line.slice(hs + HASH_MEMBER_LEN);
  if (DIGEST_PREFIX + sha256Hex(body) !== claimed) {
    return slowCheck(line, expected, prev, captureId);
  }
  // The self-hash holds, so the line is the sealer's canonical output and
  // its top-level members sit where canonical ordering puts them.
  const si = line.lastIndexOf(SEQ_MEMBER) + SEQ_MEMBER.length;
  let seq = 0;
  for (let i = si; i < line.length; i++) {
    const c = line.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    seq = seq * 10 + c;
  }
  if (seq !== expected) {
    return {
      kind: "sequence",
      message: `Expected sequence ${expected}, found ${seq}`,
    };
  }
  const pi = line.lastIndexOf(PREV_MEMBER) + PREV_MEMBER.length;
  const linked = line.slice(pi, pi + 71);
  if (linked !== prev) {
    return {
      kind: "link",
      message:
        `Sequence ${expected} links to ${linked}, but the previous event's hash is ${prev}`,
    };
  }
  if (captureId !== undefined) {
    const ci = line.indexOf(CAP_MEMBER) + CAP_MEMBER.length;
    const cap = line.slice(ci, line.indexOf('"', ci));
    if (cap !== captureId) {
      return {
        kind: "capture",
        message:
          `Sequence ${expected} belongs to capture "${cap}", not "${captureId}"`,
      };
    }
  }
  return claimed;
}

/** Full parse, used only to describe a line that failed the fast path. */
function slowCheck(
  line: string,
  expected: number,
  prev: string,
  captureId?: string,
): string | { kind: ChainProblemKind; message: string } {
  let ev: TraceEvent;
  try {
    ev = JSON.parse(line);
  } catch (err) {
    return {
      kind: "syntax",
      message: `Line is not JSON (${(err as Error).message})`,
    };
  }
  if (typeof ev !== "object" || ev === null || Array.isArray(ev)) {
    return { kind: "syntax", message: "Line is not a JSON object" };
  }
  if (ev.sequence !== expected) {
    return {
      kind: "sequence",
      message: `Expected sequence ${expected}, found ${
        JSON.stringify(ev.sequence)
      }`,
    };
  }
  if (captureId !== undefined && ev.capture_id !== captureId) {
    return {
      kind: "capture",
      message: `Sequence ${expected} belongs to capture ${
        JSON.stringify(ev.capture_id)
      }, not "${captureId}"`,
    };
  }
  let actual: string;
  try {
    actual = computeEventHash(ev);
  } catch (err) {
    return {
      kind: "syntax",
      message: `Line is not a trace event (${(err as Error).message})`,
    };
  }
  if (actual !== ev.event_hash) {
    return {
      kind: "self_hash",
      message:
        `Sequence ${expected} does not match its event_hash: the line was altered after sealing`,
    };
  }
  if (ev.prev_event_hash !== prev) {
    return {
      kind: "link",
      message:
        `Sequence ${expected} links to ${ev.prev_event_hash}, but the previous event's hash is ${prev}`,
    };
  }
  // Parses and hashes, but is not in the sealer's canonical layout.
  return {
    kind: "self_hash",
    message:
      `Sequence ${expected} is not in canonical form: the line was rewritten after sealing`,
  };
}
