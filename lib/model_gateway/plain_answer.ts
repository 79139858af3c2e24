/**
 * The plain way a model request is answered (no package serves it, or its
 * package does not fit it): forwarded as it came, its answer relayed as it
 * comes — a stream piece by piece, read for the record as it passes; a
 * whole answer read, then sent — and the exchange settled in its
 * conversation and queued to be recorded once its answer is complete. An
 * answer the upstream never gave (unreachable, too slow, the client gone)
 * is recorded as such and thrown as the gateway's error.
 *
 * @module
 */
import {
  type AnswerPieces,
  type GatewayAnswer,
  recordedError,
} from "./api_errors.ts";
import type { GatewayError } from "./gateway_error.ts";
import { ANSWER_HEADERS } from "./answer_headers.ts";
import type { ConversationBook } from "./conversation_book.ts";
import type { ModelGatewayStats } from "./options.ts";
import { MAX_BODY_MESSAGES } from "./recorded_body.ts";
import { type Pending, readPendingAnswer } from "./pending_exchange.ts";
import type { RecordQueue } from "./record_queue.ts";
import { concat, headerText } from "./exchange_bytes.ts";
import type { KeptBytes } from "./kept_bytes.ts";
import { relayStream } from "./stream_relay.ts";
import type { Pieces } from "./body_pieces.ts";
import { readWholeAnswer, type WholeAnswer } from "./whole_answer.ts";
import type {
  GatewayRequest,
  RecordedRoute,
  RequestTicket,
} from "./gateway_request.ts";
import type { PackageOutcome } from "./recorder.ts";
import { answerHeaders } from "./upstream_answer.ts";
import type { Forwarded } from "./upstream_forward.ts";
import type { UpstreamDeadline } from "./upstream_deadline.ts";
import type { WireSpec } from "./wires/wire_spec.ts";

/** A model request going the plain way. */
export interface PlainRequest {
  /** The request. */
  req: GatewayRequest;
  /** Which API's error shape. */
  family: WireSpec;
  /** Its recorded route (its reader), or undefined when it is not recorded. */
  route: RecordedRoute | undefined;
  /** When it arrived. */
  started: Date;
  /** The request as read on arrival, its capture and episode (null: not recorded). */
  ticket: RequestTicket | null;
  /** The request on its way upstream. */
  sent: Promise<Forwarded | { error: GatewayError }>;
  /** The package it came under, which does not fit it, and why. */
  passedThrough: { id: string; reason: string } | null;
}

/** What the plain way needs of the gateway. */
export interface PlainDeps {
  /** The gateway's counters. */
  stats: ModelGatewayStats;
  /** The gateway's conversations (the exchange is settled there). */
  book: ConversationBook;
  /** Where the exchanges go to be recorded. */
  records: RecordQueue;
  /** The gateway's budget of bytes held (answers being read). */
  kept: KeptBytes;
  /** The most bytes of one answer the gateway holds. */
  maxAnswerBytes: number;
}

/**
 * Answer a request the plain way: the upstream's answer as it came (its
 * error answers too), the exchange queued for recording when it has a
 * ticket.
 *
 * @param a The request, addressed, read, and on its way upstream.
 * @param deps The gateway's counters, conversations, recording and limits.
 * @returns The answer: a whole body, or pieces relayed as they come.
 * @throws {GatewayError} No answer from the upstream (502, 504, the client
 *   gone): recorded, then thrown.
 */
export async function answerPlain(
  a: PlainRequest,
  deps: PlainDeps,
): Promise<GatewayAnswer> {
  const { req, family, ticket, passedThrough } = a;
  const { stats, records, kept } = deps;
  const pkgOutcome: PackageOutcome | null = passedThrough
    ? {
      id: passedThrough.id,
      outcome: "passed_through",
      reason: passedThrough.reason,
    }
    : null;
  const record: Pending | null = ticket
    ? {
      reader: a.route!.reader,
      capture: ticket.capture,
      identity: ticket.identity,
      request: ticket.request,
      parsed: keptBody(ticket),
      started: a.started,
      status: 0,
      answer: null,
      stream: null,
      kept: 0,
      failure: null,
      ...(pkgOutcome ? { package: pkgOutcome } : {}),
    }
    : null;
  const failed = (err: GatewayError): never => {
    if (record) {
      // No answer reached the client: recorded as such, and the same
      // request again is a retry in the same episode.
      record.status = err.status;
      record.error = recordedError(family, err);
      settle(deps.book, record, false);
      records.enqueue(record);
    }
    throw err;
  };
  const sent = await a.sent;
  if ("error" in sent) return failed(sent.error);
  const { res, deadline } = sent;
  const out = answerHeaders(res);
  if (record) record.status = res.status;
  if (passedThrough) {
    out[ANSWER_HEADERS.skipped] = headerText(passedThrough.reason);
  }
  const isStream = (res.headers.get("content-type") ?? "").includes(
    "text/event-stream",
  );
  if (isStream && res.body) {
    stats.streams++;
    if (record) {
      // While it streams, a request repeating what came so far (the
      // client read the last event before the relay saw the end) still
      // finds its conversation.
      const end = record.identity.conversation.end;
      if (end.owner === record.identity) {
        end.read = () => readPendingAnswer(record, true);
      }
    }
    return {
      status: res.status,
      headers: out,
      body: null,
      pieces: relay(res.body, record, {
        client: req.signal,
        deadline,
      }, deps),
    };
  }
  let whole: WholeAnswer;
  try {
    whole = await readWholeAnswer(res, {
      kept,
      maxAnswerBytes: deps.maxAnswerBytes,
    });
  } catch (err) {
    return failed(sent.fail(err));
  }
  if (whole.rest) {
    // Larger than the gateway holds: what was read goes out, then the
    // rest as it comes; the record holds no answer.
    const reason = whole.rest.reason;
    if (record) {
      record.not_kept = reason;
      stats.not_kept = (stats.not_kept ?? 0) + 1;
      stats.last_not_kept = reason;
    }
    return {
      status: res.status,
      headers: out,
      body: null,
      pieces: relay(
        whole.rest.stream,
        record,
        { client: req.signal, deadline, lead: whole.chunks },
        deps,
      ),
    };
  }
  deadline.end();
  const raw = whole.chunks.length === 1
    ? whole.chunks[0]
    : concat(whole.chunks);
  if (record) {
    record.answer = raw;
    record.kept = whole.taken;
    settle(
      deps.book,
      record,
      res.status >= 200 && res.status < 300 && !req.signal?.aborted,
    );
    records.enqueue(record);
  } else kept.give(whole.taken);
  return { status: res.status, headers: out, body: null, raw };
}

/** Settle a plain exchange's end: answered (read on demand) or failed. */
function settle(
  book: ConversationBook,
  record: Pending,
  answered: boolean,
): void {
  const id = record.identity;
  book.settle(id.conversation, id, {
    state: answered ? "answered" : "failed",
    read: answered ? () => readPendingAnswer(record) : null,
  });
}

/**
 * Relay a stream piece by piece (`relayStream`), its answer read for the
 * record as it passes; the exchange is settled and queued at its end.
 */
function relay(
  pieces: Pieces,
  record: Pending | null,
  options: {
    client: AbortSignal | undefined;
    deadline: UpstreamDeadline;
    lead?: Uint8Array[];
  },
  deps: PlainDeps,
): AnswerPieces {
  return relayStream(pieces, record, options, {
    kept: deps.kept,
    maxAnswerBytes: deps.maxAnswerBytes,
    stats: deps.stats,
    finish: (r, answered) => {
      settle(deps.book, r, answered);
      deps.records.enqueue(r);
    },
  });
}

/**
 * The body kept for a request's record: without its list of messages when
 * the record leaves that list out (`MAX_BODY_MESSAGES` new messages), so a
 * very long request waiting to be recorded holds only what is recorded.
 */
function keptBody(ticket: RequestTicket): Record<string, unknown> {
  const fresh = ticket.request.messages.length - ticket.identity.known;
  if (fresh <= MAX_BODY_MESSAGES) return ticket.parsed;
  const { messages: _m, input: _i, ...rest } = ticket.parsed;
  return rest;
}
