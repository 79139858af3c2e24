/**
 * The hash chain. A {@linkcode HashChainer} (one per capture) assigns
 * `sequence` and seals each event: `event_hash` is `sha256:` + hex SHA-256 of
 * the canonical JSON of the event without `event_hash` (so `sequence` and
 * `prev_event_hash` are covered). The first event links to
 * {@linkcode GENESIS_HASH}; sequences start at 1.
 *
 * @module
 */
import { canonicalJson } from "./canonical_json.ts";
import type { TraceEvent, UnsealedEvent } from "./event.ts";
import { DIGEST_PREFIX, GENESIS_HASH, sha256Hex } from "./hash.ts";

/** A sealed event with its canonical spool line (no trailing newline). */
export interface SealedEvent {
  /** The sealed event. */
  event: TraceEvent;
  /** Canonical JSON of the whole event: the exact spool line. */
  line: string;
}

/** Where a chain stands: the last sequence and its hash. */
export interface ChainHead {
  /** Last sequence sealed (0 before the first event). */
  sequence: number;
  /** Hash of the last event (genesis before the first). */
  hash: string;
}

/** The chain's starting point. */
export const GENESIS_HEAD: ChainHead = Object.freeze({
  sequence: 0,
  hash: GENESIS_HASH,
});

function bodyOf(
  ev: UnsealedEvent,
  sequence: number,
  prev: string,
): Omit<TraceEvent, "event_hash"> {
  // Explicit construction: exactly the envelope fields, nothing extra.
  return {
    schema_version: ev.schema_version,
    event_id: ev.event_id,
    capture_id: ev.capture_id,
    episode_id: ev.episode_id,
    sequence,
    timestamp: ev.timestamp,
    source: {
      host: ev.source.host,
      adapter: ev.source.adapter,
      model: ev.source.model ?? null,
    },
    actor: ev.actor,
    kind: ev.kind,
    parent_event_id: ev.parent_event_id ?? null,
    payload: ev.payload,
    prev_event_hash: prev,
  };
}

const q = JSON.stringify;

/**
 * Compute the `event_hash` an event must carry.
 *
 * @param event A sealed (or partly sealed) event; its `event_hash` is ignored.
 * @returns `sha256:<hex>`.
 */
export function computeEventHash(
  event: Omit<TraceEvent, "event_hash"> & { event_hash?: string },
): string {
  const body = canonicalJson(
    bodyOf(event, event.sequence, event.prev_event_hash),
  );
  return DIGEST_PREFIX + sha256Hex(body);
}

/**
 * Assigns sequences and seals events for one capture. Reuse one chainer per
 * capture so sequences and hashes stay consistent; an event never knows where
 * it is stored.
 */
export class HashChainer {
  #sequence: number;
  #hash: string;

  /**
   * Create a `HashChainer`.
   *
   * @param head Where the chain stands (restored from a spool's last line).
   */
  constructor(head: ChainHead = GENESIS_HEAD) {
    this.#sequence = head.sequence;
    this.#hash = head.hash;
  }

  /** The current head. */
  get head(): ChainHead {
    return { sequence: this.#sequence, hash: this.#hash };
  }

  /**
   * Seal the next event of the chain without committing it: call
   * {@linkcode HashChainer.commit} once the line is durably written.
   *
   * @param ev The unsealed event.
   * @returns The sealed event and its canonical line.
   */
  prepare(ev: UnsealedEvent): SealedEvent {
    const sequence = this.#sequence + 1;
    const prev = this.#hash;
    const s = ev.source;
    const model = s.model ?? null;
    const parent = ev.parent_event_id ?? null;
    // The canonical body in its fixed sorted key order (what
    // `canonicalJson` writes for it), in two parts: `event_hash` goes
    // between them in the line, so neither is searched for or cut.
    // An integer is written as it is; anything else as canonicalJson
    // writes it (or refuses it).
    const seq = Number.isSafeInteger(sequence)
      ? String(sequence)
      : canonicalJson(sequence);
    const before = '{"actor":' + q(ev.actor) + ',"capture_id":' +
      q(ev.capture_id) + ',"episode_id":' + q(ev.episode_id);
    const after = ',"event_id":' + q(ev.event_id) + ',"kind":' + q(ev.kind) +
      ',"parent_event_id":' + (parent === null ? "null" : q(parent)) +
      ',"payload":' + canonicalJson(ev.payload) + ',"prev_event_hash":' +
      q(prev) + ',"schema_version":' + q(ev.schema_version) +
      ',"sequence":' + seq + ',"source":{"adapter":' +
      q(s.adapter) + ',"host":' + q(s.host) + ',"model":' +
      (model === null ? "null" : q(model)) + '},"timestamp":' +
      q(ev.timestamp) + "}";
    const hash = DIGEST_PREFIX + sha256Hex(before + after);
    // Explicit construction: exactly the envelope fields, nothing extra.
    const event = {
      schema_version: ev.schema_version,
      event_id: ev.event_id,
      capture_id: ev.capture_id,
      episode_id: ev.episode_id,
      sequence,
      timestamp: ev.timestamp,
      source: { host: s.host, adapter: s.adapter, model },
      actor: ev.actor,
      kind: ev.kind,
      parent_event_id: parent,
      payload: ev.payload,
      prev_event_hash: prev,
      event_hash: hash,
    } as TraceEvent;
    return { event, line: before + ',"event_hash":"' + hash + '"' + after };
  }

  /**
   * Advance the head past a prepared event.
   *
   * @param sealed What {@linkcode HashChainer.prepare} returned last.
   * @throws {RangeError} When it is not the next event of this chain.
   */
  commit(sealed: SealedEvent): void {
    const { sequence, prev_event_hash, event_hash } = sealed.event;
    if (sequence !== this.#sequence + 1 || prev_event_hash !== this.#hash) {
      throw new RangeError(
        `Cannot commit sequence ${sequence}: the chain head is at ${this.#sequence}`,
      );
    }
    this.#sequence = sequence;
    this.#hash = event_hash;
  }

  /**
   * Seal and commit in one step (for chains kept in memory).
   *
   * @param ev The unsealed event.
   * @returns The sealed event and its line.
   */
  seal(ev: UnsealedEvent): SealedEvent {
    const sealed = this.prepare(ev);
    this.commit(sealed);
    return sealed;
  }
}
