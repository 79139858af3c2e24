/**
 * {@linkcode RecordQueue}: exchanges the model gateway answered, recorded
 * after their answers are on their way, in the order answered, none
 * dropped. Each waits 10 ms, then its answer is read
 * (`pending_exchange.ts`; the request was read, its capture and episode
 * decided, when it arrived: `gateway.ts`), turned
 * into events (`recorder.ts`) and written, in slices of about a
 * millisecond — inside one exchange too (a large exchange's events are
 * written 512 at a time) — so the requests that follow are answered first.
 *
 * What the recorder cannot take now goes to disk: past
 * `maxRecordQueue` exchanges waiting in memory, or past the gateway's
 * budget of kept bytes (`KeptBytes`), an exchange is written to the
 * store's spill (`record_spill.ts`, one line each: `exchange_tape.ts`) and
 * its memory let go; once one is spilled, those that follow are spilled too
 * until the spill is recorded, so the order holds. A spill a stopped
 * process left (`kill -9` included) is recorded at the next start
 * (`ModelGateway.restore`). A recording that fails (a finished capture) is
 * counted on `/health`, never thrown.
 *
 * @module
 */
import type { ConversationBook } from "./conversation_book.ts";
import type { Identity } from "./episode_identity.ts";
import type { ModelGatewayContext, ModelGatewayStats } from "./options.ts";
import { type Exchange, exchangeEventStream, MAY_PAUSE } from "./recorder.ts";
import type { TraceEvent, UnsealedEvent } from "../trace/event.ts";
import type { KeptBytes } from "./kept_bytes.ts";
import { RecordSpill, type TapeAt } from "./record_spill.ts";
import {
  type ExchangeTape,
  identityTape,
  parseTape,
  standInIdentity,
  tapeExchange,
  tapeLine,
} from "./exchange_tape.ts";
import { exactForms, scrubFormsEvents } from "../trace/scrub_exact.ts";
import { TimeSlices } from "./time_slices.ts";
import { ToolsetDigests } from "./toolset_digest.ts";
import {
  type Arrival,
  type Pending,
  pendingExchange,
} from "./pending_exchange.ts";

/** Decodes a spilled request's body (one decoder, no state between calls). */
const UTF8 = new TextDecoder();

/**
 * How long answered exchanges wait to be recorded, together: recording is
 * work on the server's one thread, kept out of the way of requests that
 * follow at once (an agent's next request, others' requests).
 */
const RECORD_DELAY_MS = 10;

/** Milliseconds of recording before the loop yields to requests. */
const RECORD_SLICE_MS = 1;

/**
 * Milliseconds of recording before the loop yields while a backlog waits
 * (a quarter of the in-memory queue, or anything spilled): in 1 ms slices
 * the requests answered between slices outran the recording under steady
 * load, and a third of the exchanges at c=8 went through the spill, each
 * written, read back and parsed (issue 45).
 */
const BACKLOG_SLICE_MS = 3;

/** Milliseconds of recording a large exchange before the loop yields. */
const LARGE_SLICE_MS = 8;

/**
 * A recording run that follows this long a pause is a quiet moment: the
 * exchanges waiting when it starts are made durable as soon as they are
 * written, on this thread (see `#settle`).
 */
const QUIET_MS = 50;

/** Milliseconds of recording before a quiet run yields (one cold exchange). */
const QUIET_SLICE_MS = 4;

/** A run is quiet only with this few exchanges waiting (not a backlog). */
const QUIET_MAX_WAITING = 4;

/**
 * After settling on the thread took `t` ms, the next settle waits at least
 * this many times `t` (a slow disk never holds the loop for more than about
 * 1% of the time).
 */
const SETTLE_BACKOFF = 100;

/** Events of one exchange written together (a slice may end between runs). */
const EVENTS_PER_WRITE = 512;

/** What waits in memory. */
type Item = Pending | { ready: Exchange };

/** A spilled exchange: where its tape lies, and its identity while this process lives. */
interface Spilled {
  at: TapeAt;
  identity: Identity | null;
}

/** Options of {@linkcode RecordQueue}. */
export interface RecordQueueOptions {
  /** The gateway's memory. */
  book: ConversationBook;
  /** Its counters. */
  stats: ModelGatewayStats;
  /** Exchanges waiting in memory; past it, they are spilled. */
  max: number;
  /** The budget of kept bytes (answers in flight and exchanges waiting). */
  budget: KeptBytes;
  /** Whether to record at all (off: every exchange is read, none stored). */
  record: boolean;
  /** Milliseconds before recording starts. @default 10 */
  delayMs?: number;
  /** Record bodies whole (no field left out as the previous request's). @default false */
  wholeBodies?: boolean;
}

/** The recording of answered exchanges. */
export class RecordQueue {
  readonly #ctx: ModelGatewayContext;
  readonly #book: ConversationBook;
  readonly #stats: ModelGatewayStats;
  readonly #max: number;
  readonly #budget: KeptBytes;
  readonly #record: boolean;
  readonly #delay: number;
  readonly #wholeBodies: boolean;
  readonly #spill: RecordSpill;
  readonly #memory: { item: Item; bytes: number }[] = [];
  #spilled: Spilled[] = [];
  /** Exchanges to be written to the spill (after their answers). */
  readonly #toSpill: Item[] = [];
  #spilledAt = 0;
  readonly #arrivals = new WeakMap<Identity, Arrival>();
  #running = false;
  /** When the last recording run ended (performance.now()). */
  #lastRunEnd = -Infinity;
  /** No settle on the thread before this time (after a slow one). */
  #settleNotBefore = 0;
  /** The digests of the toolsets met lately. */
  readonly #toolsets = new ToolsetDigests();
  /** The forms of the keys scrubbed last (a client sends the same key each time). */
  #forms: { keys: string; forms: string[] } = { keys: "", forms: [] };

  /**
   * Create a `RecordQueue`.
   *
   * @param ctx The store, capture choice and redaction.
   * @param options Memory, counters, bounds.
   */
  constructor(ctx: ModelGatewayContext, options: RecordQueueOptions) {
    this.#ctx = ctx;
    this.#book = options.book;
    this.#stats = options.stats;
    this.#max = options.max;
    this.#budget = options.budget;
    this.#record = options.record;
    this.#delay = options.delayMs ?? RECORD_DELAY_MS;
    this.#wholeBodies = options.wholeBodies ?? false;
    this.#spill = new RecordSpill(ctx.store.root);
  }

  /**
   * Note what a request was given on arrival (its request id, the keys to
   * scrub).
   *
   * @param identity Its identity.
   * @param arrival What it was given.
   */
  arrived(identity: Identity, arrival: Arrival): void {
    if (!this.#arrivals.has(identity)) this.#stats.requests_held++;
    this.#arrivals.set(identity, arrival);
  }

  /** Exchanges waiting (in memory and spilled). */
  get waiting(): number {
    return this.#memory.length + this.#toSpill.length + this.#spilled.length -
      this.#spilledAt;
  }

  /**
   * Record an exchange read already (the package paths).
   *
   * @param ex The exchange.
   */
  ready(ex: Exchange): void {
    this.#add({ ready: ex });
  }

  /**
   * Record an exchange once read (after its answer).
   *
   * @param p What was sent and answered.
   */
  enqueue(p: Pending): void {
    p.finished = Date.now();
    this.#add(p);
  }

  /**
   * Count an exchange not recorded, and why.
   *
   * @param reason Why (never a credential).
   */
  miss(reason: string): void {
    this.#stats.record_misses++;
    this.#stats.last_miss = reason.slice(0, 300);
  }

  /** Let go of what a request was given on arrival (its exchange is done). */
  #letGo(identity: Identity): void {
    if (this.#arrivals.delete(identity)) this.#stats.requests_held--;
  }

  #add(item: Item): void {
    const identity = "ready" in item ? item.ready.identity : item.identity;
    if (!this.#record) {
      this.#release(item);
      this.#letGo(identity);
      this.miss("recording is off");
      return;
    }
    const body = this.#arrivals.get(identity)?.body?.length ?? 0;
    const held = "ready" in item ? 0 : item.kept;
    if (
      this.#spilled.length === 0 && this.#toSpill.length === 0 &&
      this.#memory.length < this.#max && this.#budget.take(body)
    ) {
      this.#memory.push({ item, bytes: body + held });
      this.#wake();
      return;
    }
    // Written to the spill after the answer is on its way, never before.
    this.#toSpill.push(item);
    if (this.#toSpill.length === 1) setTimeout(() => this.#flushSpill(), 0);
    this.#wake();
  }

  /** Write what waits to be spilled, in order. */
  #flushSpill(): void {
    const items = this.#toSpill.splice(0);
    for (const item of items) this.#spillOne(item);
  }

  /** Let go of an item's kept bytes (taken while its answer came). */
  #release(item: Item): void {
    if (!("ready" in item)) {
      this.#budget.give(item.kept);
      item.kept = 0;
    }
  }

  /** Write an exchange to the spill and let go of its memory. */
  #spillOne(item: Item): void {
    try {
      const ex = "ready" in item ? item.ready : pendingExchange(item);
      this.#keepAnswerKey(ex);
      const arrival = this.#arrivals.get(ex.identity);
      const tape: Omit<ExchangeTape, "body"> = {
        v: 1,
        request_event_id: arrival?.request_event_id ??
          `evt_${crypto.randomUUID()}`,
        capture_id: ex.capture_id,
        wire: ex.request.wire,
        identity: identityTape(
          ex.identity,
          arrival?.previous ?? null,
          arrival?.forked_request ?? null,
        ),
        started: ex.started.toISOString(),
        duration_ms: ex.duration_ms,
        status: ex.status,
        response: ex.response,
        ...(ex.error ? { error: ex.error } : {}),
        ...(ex.incomplete ? { incomplete: true } : {}),
        ...(ex.served_by ? { served_by: ex.served_by } : {}),
        ...(ex.refused_attempts?.length
          ? { refused_attempts: ex.refused_attempts }
          : {}),
        ...(ex.package ? { package: ex.package } : {}),
        request: ex.request,
      };
      // The body as sent, unless a package changed what was sent.
      const raw = arrival?.body && !("ready" in item)
        ? { text: UTF8.decode(arrival.body) }
        : { value: ex.body };
      const at = this.#spill.append(
        tapeLine(tape, raw, arrival?.keys ?? []),
      );
      this.#spilled.push({ at, identity: ex.identity });
      this.#stats.spilled = (this.#stats.spilled ?? 0) + 1;
      // The tape holds the request's bytes now.
      if (arrival) arrival.body = null;
    } catch (err) {
      this.miss(`spilling failed: ${(err as Error).message}`);
    } finally {
      this.#release(item);
    }
  }

  /** The conversation's end keeps the answer's key, not the exchange's bytes. */
  #keepAnswerKey(ex: Exchange): void {
    const end = ex.identity.conversation.end;
    if (end.owner === ex.identity && end.read) {
      this.#book.answerOf(ex.identity.conversation);
    }
  }

  #wake(): void {
    this.#stats.queued = this.waiting;
    if (!this.#running) {
      this.#running = true;
      // After the answer's bytes are handed to the connection, and the
      // requests that follow at once are on their way.
      setTimeout(() => this.#run(), this.#delay);
    }
  }

  /**
   * Record what waits, a slice at a time: after each slice of about a
   * millisecond the loop yields, so requests that arrived meanwhile are
   * answered before the rest is recorded.
   */
  async #run(): Promise<void> {
    const began = performance.now();
    // A run after a pause records one agent's exchange or so: those waiting
    // now are done in one slice and made durable right after, in the same
    // turn of the loop; whatever arrives meanwhile is recorded as under load.
    const waiting = this.waiting;
    let quietLeft = began - this.#lastRunEnd >= QUIET_MS + this.#delay &&
        began >= this.#settleNotBefore && waiting <= QUIET_MAX_WAITING
      ? waiting
      : 0;
    if (quietLeft > 0) this.#ctx.store.hold();
    let slices = new TimeSlices(
      quietLeft > 0 ? QUIET_SLICE_MS : RECORD_SLICE_MS,
    );
    try {
      for (;;) {
        const mem = this.#memory.shift();
        if (mem) {
          try {
            const ex = "ready" in mem.item
              ? mem.item.ready
              : pendingExchange(mem.item);
            await this.#recordOne(ex, slices);
          } catch (err) {
            this.miss(`recording failed: ${(err as Error).message}`);
          } finally {
            this.#budget.give(mem.bytes);
            if (!("ready" in mem.item)) mem.item.kept = 0;
            // Its identity lives on in the conversation book: what it was
            // given on arrival (the request's bytes) must not.
            this.#letGo(
              "ready" in mem.item ? mem.item.ready.identity : mem.item.identity,
            );
          }
        } else if (
          this.#toSpill.length > 0 && this.#spilledAt === this.#spilled.length
        ) {
          // Older than anything spilled after them: written first.
          this.#flushSpill();
        } else if (this.#spilledAt < this.#spilled.length) {
          const s = this.#spilled[this.#spilledAt];
          try {
            await this.#recordTape(
              parseTape(this.#spill.read(s.at)),
              s.identity,
              slices,
            );
          } catch (err) {
            this.miss(`recording failed: ${(err as Error).message}`);
          }
          if (s.identity) this.#letGo(s.identity);
          this.#spilledAt++;
          if (this.#spilledAt === this.#spilled.length) {
            // Every tape is recorded: the file starts again empty.
            this.#spilled = [];
            this.#spilledAt = 0;
            this.#spill.clear();
          }
        } else break;
        this.#stats.queued = this.waiting;
        if (quietLeft > 0 && --quietLeft === 0) {
          this.#settle();
          slices = new TimeSlices(RECORD_SLICE_MS);
        }
        if (quietLeft === 0) {
          slices.resize(
            this.#spilledAt < this.#spilled.length ||
              this.#memory.length >= this.#max / 4
              ? BACKLOG_SLICE_MS
              : RECORD_SLICE_MS,
          );
        }
        await slices.maybePause();
      }
    } finally {
      this.#stats.queued = this.waiting;
      this.#stats.pending_calls = this.#book.sizes.pending_calls;
      this.#running = false;
      this.#lastRunEnd = performance.now();
      if (quietLeft > 0) this.#settle();
      if (this.waiting > 0) this.#wake();
    }
  }

  /**
   * At the end of a run that followed a pause (one agent's exchange, not a
   * stream of them), make what was written durable now: the spool's sync,
   * the index flush and its receipts' sync would otherwise each wake the
   * process again later, and a wake after a pause costs more than the work.
   * Under load (runs close together) the timers group that work instead.
   */
  #settle(): void {
    const start = performance.now();
    try {
      this.#ctx.store.settle();
    } catch {
      // Tried again in the background; a failed flush shows in /health.
    }
    const took = performance.now() - start;
    this.#settleNotBefore = start + took * SETTLE_BACKOFF;
  }

  /** Record one spilled exchange (its live identity, else a stand-in). */
  async #recordTape(
    tape: ExchangeTape | null,
    identity: Identity | null,
    slices: TimeSlices,
    onSealed?: (events: TraceEvent[]) => void,
  ): Promise<void> {
    if (tape === null) {
      this.miss("a spilled exchange could not be read back");
      return;
    }
    const id = identity ?? standInIdentity(tape);
    await this.#recordOne(tapeExchange(tape, id), slices, {
      request_event_id: tape.request_event_id,
      onSealed,
    });
  }

  /** Turn one exchange into events and write them, yielding between runs. */
  async #recordOne(
    ex: Exchange,
    normal: TimeSlices,
    given?: {
      request_event_id: string;
      onSealed?: (events: TraceEvent[]) => void;
    },
  ): Promise<void> {
    this.#keepAnswerKey(ex);
    const arrival = this.#arrivals.get(ex.identity);
    const id = given?.request_event_id ?? arrival?.request_event_id;
    const keys = arrival?.keys ?? [];
    const sink = this.#ctx.store.sink(ex.capture_id);
    // About how many events (for /health while a large one is written).
    const about = Math.max(0, ex.request.messages.length - ex.identity.known) +
      4;
    // A large exchange is written in longer slices (still a few ms between
    // turns of the loop): in 1 ms slices it waited four times as long,
    // holding its request meanwhile.
    const slices = about > EVENTS_PER_WRITE
      ? new TimeSlices(LARGE_SLICE_MS)
      : normal;
    let done = 0;
    let oldId: string | null = null;
    let run: UnsealedEvent[] = [];
    const write = () => {
      // The client's exact key first (whatever its shape), then the rules.
      const scrubbed = keys.length > 0
        ? scrubFormsEvents(run, this.#formsOf(keys))
        : run;
      const sealed = sink.emitMany(this.#ctx.redact(scrubbed));
      done += run.length;
      run = [];
      given?.onSealed?.(sealed);
    };
    try {
      for (
        const made of exchangeEventStream(ex, {
          book: this.#book,
          toolsets: this.#toolsets,
          wholeBodies: this.#wholeBodies,
        })
      ) {
        if (made === MAY_PAUSE) {
          if (slices.due()) await slices.pause();
          continue;
        }
        const ev = made;
        // The request under the id it was given on arrival (renamed in
        // place, so the book's record of the conversation, made from this
        // event when the stream ends, holds that id too).
        if (id && ev.kind === "model.requested" && oldId === null) {
          oldId = ev.event_id;
          ev.event_id = id;
        } else if (oldId !== null && ev.parent_event_id === oldId) {
          ev.parent_event_id = id!;
        }
        run.push(ev);
        if (run.length >= EVENTS_PER_WRITE) {
          write();
          if (slices.due()) {
            this.#stats.busy = {
              what: "recording",
              done,
              of: Math.max(about, done + 1),
            };
            await slices.pause();
          }
        }
      }
      if (run.length > 0) write();
    } catch (err) {
      // Not all of it is stored: the conversation's next request records
      // its long fields in full rather than name this one as holding them.
      ex.identity.conversation.recorded.fields = undefined;
      throw err;
    } finally {
      this.#stats.busy = null;
    }
    this.#stats.recorded++;
  }

  /** The forms of a request's keys ({@linkcode exactForms}), kept for the next. */
  #formsOf(keys: string[]): string[] {
    const joined = JSON.stringify(keys);
    if (joined !== this.#forms.keys) {
      this.#forms = { keys: joined, forms: exactForms(keys) };
    }
    return this.#forms.forms;
  }

  /**
   * The tapes a stopped process left in the spill, in order.
   *
   * @returns The tapes (a line that is not one is counted as a miss).
   */
  leftOver(): ExchangeTape[] {
    const out: ExchangeTape[] = [];
    for (const line of this.#spill.leftOver()) {
      const t = parseTape(line);
      if (t) out.push(t);
      else this.miss("a spilled exchange could not be read back");
    }
    return out;
  }

  /**
   * Record the tapes a stopped process left (at start, before requests),
   * then empty the spill.
   *
   * @param tapes The tapes not recorded yet, in order.
   * @param onSealed Each run of events as written.
   */
  async recordLeftOver(
    tapes: ExchangeTape[],
    onSealed: (events: TraceEvent[]) => void,
  ): Promise<void> {
    const slices = new TimeSlices(RECORD_SLICE_MS * 10);
    for (const t of tapes) {
      try {
        await this.#recordTape(t, null, slices, onSealed);
        this.#stats.recorded_from_spill =
          (this.#stats.recorded_from_spill ?? 0) + 1;
      } catch (err) {
        this.miss(`recording failed: ${(err as Error).message}`);
      }
    }
    this.#spill.clear();
  }

  /** Resolves once every exchange answered so far is recorded (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.waiting > 0 || this.#running) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  /** Close the spill's file. */
  close(): void {
    this.#spill.close();
  }
}
