/**
 * {@linkcode admitRequest}: a model request on a recorded route read once,
 * when it arrives (while it is on its way upstream): its body parsed, its
 * wire's reading (the messages hashed, in slices for a long conversation),
 * its capture (`x-harness-capture`, else the one active at its arrival)
 * and its episode and conversation (`episode_identity.ts`), and its
 * request id given, so the recording queue knows it from then on. A
 * request that cannot be read or recorded is forwarded all the same; why
 * is counted as a miss.
 *
 * @module
 */
import { answerKey } from "./conversation_entry.ts";
import type { ConversationBook } from "./conversation_book.ts";
import { clientEpisode, identify } from "./episode_identity.ts";
import type { ModelGatewayStats } from "./options.ts";
import type { RecordQueue } from "./record_queue.ts";
import type { NormRequest } from "./wire_types.ts";
import { isValidId } from "../trace/ids.ts";
import { requestSecrets } from "../trace/scrub_exact.ts";
import type { ActiveCaptureReading } from "./active_capture_reading.ts";
import { TimeSlices } from "./time_slices.ts";
import { readRequest } from "./request_reading.ts";
import type {
  GatewayRequest,
  RecordedRoute,
  RequestTicket,
} from "./gateway_request.ts";
import type { HookJoin, WireSpec } from "./wires/wire_spec.ts";

/** Milliseconds of reading a large request before the loop yields. */
const ADMIT_SLICE_MS = 4;

/** What reading a request on arrival needs of the gateway. */
export interface AdmissionDeps {
  /** The recording queue (told of the request; counts the misses). */
  records: RecordQueue;
  /** The gateway's conversations. */
  book: ConversationBook;
  /** The gateway's counters (`busy` while a long request is read). */
  stats: ModelGatewayStats;
  /** The active capture, read about once per turn of the loop. */
  active: ActiveCaptureReading;
  /** The wires' joins of host hooks' episodes (Gemini CLI's), by wire. */
  joins: Map<WireSpec, HookJoin>;
}

/**
 * Read a request on a recorded route once: its body, its wire's reading,
 * its capture, its episode.
 *
 * @param req The request.
 * @param at Its route, its body, when it arrived.
 * @param deps The gateway's queue, conversations, counters, capture and joins.
 * @returns Its ticket; or, when it cannot be read or recorded, why (a miss
 *   counted: it is forwarded all the same).
 */
export async function admitRequest(
  req: GatewayRequest,
  { route, body, started }: {
    route: RecordedRoute;
    body: Uint8Array;
    started: Date;
  },
  deps: AdmissionDeps,
): Promise<RequestTicket | string> {
  const { records, book, stats } = deps;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch (err) {
    records.miss(`unreadable request: ${(err as Error).message}`);
    return `the request cannot be read: ${(err as Error).message}`;
  }
  let request: NormRequest;
  try {
    // A long conversation's messages are hashed in slices (the loop
    // answers others meanwhile).
    request = await readRequest(
      route.reader,
      route.spec,
      parsed,
      new TimeSlices(ADMIT_SLICE_MS),
      (done, of) => {
        stats.busy = done < of ? { what: "reading", done, of } : null;
      },
    );
  } catch (err) {
    records.miss(
      `not the API's request shape: ${(err as Error).message}`,
    );
    return `the request cannot be read: ${(err as Error).message}`;
  }
  const capture = req.header("x-harness-capture") ||
    deps.active.at(started.getTime());
  if (!isValidId(capture)) {
    const why = `capture id ${
      JSON.stringify(String(capture).slice(0, 80))
    } is not valid`;
    records.miss(why);
    return why;
  }
  const body_ = parsed as Record<string, unknown>;
  let client = clientEpisode((h) => req.header(h), body_, request);
  const join = deps.joins.get(route.spec);
  if (join && client.first === null && client.later === null) {
    // No id the client sends: its host's hooks may tell the episode
    // (Gemini CLI's, by the prompt that starts the turn).
    const hooks = join.episodeOf(capture, request);
    if (hooks !== null) {
      client = { first: { id: hooks, source: "host_hooks" }, later: null };
    }
  }
  const identity = identify(book, { capture, request, client });
  // The request's id is given now: a later request (or a spilled tape)
  // names it by this id, recorded or not yet.
  const requestEventId = `evt_${crypto.randomUUID()}`;
  const previous = identity.from?.latest ?? null;
  const forked = identity.forked_from?.conversation.latest ?? null;
  identity.conversation.latest = requestEventId;
  records.arrived(identity, {
    request_event_id: requestEventId,
    previous,
    forked_request: forked,
    keys: requestSecrets((h) => req.header(h), req.target),
    body,
  });
  return {
    parsed: body_,
    request,
    capture,
    identity,
    settle(answer) {
      book.settle(identity.conversation, identity, {
        state: answer ? "answered" : "failed",
        answer: answer
          ? answerKey(answer.text, answer.tool_calls.map((c) => c.id))
          : null,
      });
      if (answer?.id && route.spec.continues_by_id) {
        book.rememberResponse(identity.conversation, answer.id);
      }
    },
  };
}
