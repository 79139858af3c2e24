/**
 * {@linkcode relayStream}: an upstream's stream relayed piece by piece, as
 * the listener asks for them ({@linkcode AnswerPieces}: no stream of ours
 * in between), each read into a buffer of the gateway's own that is reused
 * (`BodyPieces.next`: the listener copies a piece out before it asks for the
 * next); its answer is read for the record as it passes (`StreamKeep`),
 * nothing of its bytes kept past the few events gathered.
 *
 * @module
 */
import type { AnswerPieces } from "./api_errors.ts";
import type { Pieces } from "./body_pieces.ts";
import type { KeptBytes } from "./kept_bytes.ts";
import type { ModelGatewayStats } from "./options.ts";
import type { Pending } from "./pending_exchange.ts";
import { StreamKeep } from "./stream_keep.ts";
import type { UpstreamDeadline } from "./upstream_deadline.ts";

/** What a relay takes from its gateway. */
export interface RelayDeps {
  /** The gateway's budget of bytes kept for recording. */
  kept: KeptBytes;
  /** The most bytes of one answer read for its record. */
  maxAnswerBytes: number;
  /** The gateway's counters (`client_aborts`, `not_kept`). */
  stats: ModelGatewayStats;
  /**
   * The stream ended (whole, cut, or the client gone): settle the exchange
   * and queue it for recording.
   */
  finish: (record: Pending, answered: boolean) => void;
}

/**
 * Relay a stream.
 *
 * @param pieces The upstream's body.
 * @param record The exchange to record, or null.
 * @param options `client`: the client's signal; `deadline`: the upstream's
 *   time-out (ended with the stream); `lead`: pieces already read, sent
 *   first.
 * @param deps The gateway's budget, limit, counters and end of exchange.
 * @returns The pieces, for the listener.
 */
export function relayStream(
  pieces: Pieces,
  record: Pending | null,
  { client, deadline, lead }: {
    client: AbortSignal | undefined;
    deadline: UpstreamDeadline;
    lead?: Uint8Array[];
  },
  deps: RelayDeps,
): AnswerPieces {
  const keep = record && !record.not_kept
    ? record.stream = new StreamKeep(
      record.reader,
      deps.kept,
      deps.maxAnswerBytes,
    )
    : null;
  const first = lead ?? [];
  let done = false;
  const end = (failure: string | null) => {
    if (done) return;
    done = true;
    deadline.end();
    if (!record) return;
    record.failure = failure;
    if (keep) {
      keep.end();
      record.kept = keep.taken;
      if (keep.stopped) {
        deps.stats.not_kept = (deps.stats.not_kept ?? 0) + 1;
        deps.stats.last_not_kept = keep.stopped;
      }
    }
    deps.finish(
      record,
      failure === null && record.status >= 200 && record.status < 300,
    );
  };
  // A piece is read for the record once it is written: when the next is
  // asked for (its buffer is reused after that), so the read never
  // delays the piece on its way to the client.
  let unread: Uint8Array | null = null;
  const readUnread = () => {
    if (unread !== null) keep?.push(unread);
    unread = null;
  };
  return {
    read: async () => {
      if (first.length > 0) return first.shift()!;
      readUnread();
      if (done) return null;
      try {
        const piece = await pieces.next();
        if (piece === null) {
          end(null);
          return null;
        }
        if (keep) unread = piece;
        return piece;
      } catch (err) {
        if (client?.aborted) deps.stats.client_aborts++;
        end(
          client?.aborted
            ? "the client went away"
            : `the upstream stream failed: ${(err as Error).message}`,
        );
        throw err;
      }
    },
    cancel: async (reason) => {
      readUnread();
      if (!done) {
        deps.stats.client_aborts++;
        end("the client went away");
      }
      await pieces.cancel(reason);
    },
  };
}
