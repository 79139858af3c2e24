/**
 * {@linkcode CaptureCoordinator}: the control plane over a store — start and
 * finish captures, mark episode outcomes (as chained `annotation` events),
 * summarize, and produce the exact-lineage report. It never imports MCP.
 *
 * Capture lifecycle events live in the reserved episode `_capture`:
 * `annotation {type: "capture.started", label}` and
 * `annotation {type: "capture.finished"}`. An outcome is
 * `annotation {type: "episode.outcome", success, outcome}` in the episode
 * itself, so normalization finds it as the recorded task outcome.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { CaptureRecord } from "../store/index_records.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import { annotation } from "../trace/episode_events.ts";
import type { EventContext } from "../trace/make_event.ts";
import { validateId } from "../trace/ids.ts";
import type { EventSink } from "../tool_gateway/event_sink.ts";
import {
  readActiveCapture,
  writeActiveCapture,
} from "../store/active_capture.ts";
import { CAPTURE_EPISODE } from "../lineage/episodes.ts";
import {
  type CaptureInspection,
  CaptureNotFoundError,
  type EpisodeInspection,
  inspectCapture,
} from "../store/inspect.ts";
import {
  type EpisodePackageActivity,
  PackageActivityTracker,
  type PackageTotals,
  packageTotals,
} from "./package_activity.ts";
import { buildLineageReport, type LineageReport } from "./lineage_report.ts";
import { loadEpisodes } from "../lineage/episodes.ts";
import type { BehaviorPackage } from "../package/package.ts";
import {
  compileBehavior,
  type CompileOptions,
} from "../compiler/compile_behavior.ts";
import { summarizePackage } from "../package/summary.ts";
import { join } from "node:path";
import { CaptureFinishedError } from "../store/sink.ts";
import { closestIds } from "./closest_ids.ts";
import { serverCaughtUp } from "./server_caught_up.ts";
import { readLockOwner } from "../store/lock.ts";

/** A capture with this id already exists. */
export class CaptureExistsError extends Error {
  /** The capture id. */
  readonly captureId: string;
  /**
   * Create a `CaptureExistsError`.
   *
   * @param captureId The capture id.
   */
  constructor(captureId: string) {
    super(
      `Capture "${captureId}" already exists: pick another --id, or leave it out for a new one`,
    );
    this.name = "CaptureExistsError";
    this.captureId = captureId;
  }
}

/**
 * An outcome was asked for an episode the capture does not hold (a typo, a
 * truncated id, another capture's episode): nothing was recorded.
 */
export class EpisodeNotFoundError extends Error {
  /** The capture. */
  readonly captureId: string;
  /** The episode asked for. */
  readonly episodeId: string;
  /** The capture's ids closest to it (prefix, then edit distance). */
  readonly closest: string[];
  /**
   * Create an `EpisodeNotFoundError`.
   *
   * @param captureId The capture.
   * @param episodeId The episode asked for.
   * @param known The capture's episode ids.
   */
  constructor(captureId: string, episodeId: string, known: string[]) {
    const closest = closestIds(episodeId, known);
    const n = known.length;
    const held = n === 0
      ? `capture "${captureId}" holds no episodes yet`
      : closest.length
      ? `closest: ${closest.join(", ")}`
      : `none of its ${n} episode${n === 1 ? "" : "s"} is close (${
        known.slice(0, 3).join(", ")
      }${n > 3 ? ", …" : ""})`;
    const own = episodeId === CAPTURE_EPISODE
      ? `"${CAPTURE_EPISODE}" holds the capture's own records (its start and finish), not an episode`
      : `Episode "${episodeId}" is not in capture "${captureId}"`;
    super(
      `${own}: ${held}; nothing was recorded ("capture inspect ${captureId}" lists its episodes)`,
    );
    this.name = "EpisodeNotFoundError";
    this.captureId = captureId;
    this.episodeId = episodeId;
    this.closest = closest;
  }
}

/** Options of {@linkcode CaptureCoordinator}. */
export interface CaptureCoordinatorOptions {
  /**
   * Where a capture's events are written; by default the store's own sink.
   * The CLI passes an HTTP sink when an ingest server owns the store.
   */
  sinkFor?: (captureId: string) => EventSink;
  /** Clock. */
  now?: () => Date;
  /** Host tool name → logical id, for lineage. */
  canonical?: Record<string, string> | null;
  /**
   * Lets the writer that owns the store record and index what it has
   * acknowledged, before {@linkcode CaptureCoordinator.recordOutcome}
   * refuses an episode it does not see yet. By default, on a read-only
   * store whose lock names a server: {@linkcode serverCaughtUp} without a
   * token.
   */
  caughtUp?: () => Promise<void>;
}

/** Options of {@linkcode CaptureCoordinator.startCapture}. */
export interface StartCaptureOptions {
  /** Capture id; generated (`cap_<date>-<time>_<hex>`) when absent. */
  id?: string;
  /** A label for people. */
  label?: string;
  /**
   * Make it the active capture (hook events without `cap` go there).
   * @default true
   */
  activate?: boolean;
}

/** Options of {@linkcode CaptureCoordinator.markOutcome}. */
export interface OutcomeOptions {
  /** Whether the episode achieved its task. */
  success: boolean;
  /** Free outcome details. */
  outcome?: Record<string, unknown>;
  /** A note, kept in the outcome. */
  note?: string;
}

/** An episode of {@linkcode PackagedInspection}. */
export interface PackagedEpisode extends EpisodeInspection {
  /** What a served package did in it (absent when none took part). */
  package?: EpisodePackageActivity;
}

/**
 * `capture inspect`: the store's inspection, and per episode what a
 * package served at the model gateway did (`package_activity.ts`).
 */
export interface PackagedInspection extends CaptureInspection {
  /** Episodes in order of first event. */
  episodes: PackagedEpisode[];
  /** Totals over the episodes a package took part in, or null. */
  package: PackageTotals | null;
  /**
   * Events of the capture's own record (`_capture`: its start, finish, a
   * run's start), which is not an episode and is not in `episodes`.
   */
  capture_events: number;
}

/** What `summarize` returns: the inspection plus recorded outcomes. */
export interface CaptureSummary extends PackagedInspection {
  /** Episode id → recorded outcome (latest wins). */
  outcomes: Record<
    string,
    { success: boolean; outcome: Record<string, unknown> | null }
  >;
  /** Whether this is the active capture. */
  active: boolean;
}

/** The control plane. */
export class CaptureCoordinator {
  /** Store name its result is kept under. */
  readonly store: HarnessStore;
  readonly #options: CaptureCoordinatorOptions;

  /**
   * Create a `CaptureCoordinator`.
   *
   * @param store The store (writable, or read-only with `sinkFor`).
   * @param options Sink routing, clock, canonical tool map.
   */
  constructor(store: HarnessStore, options: CaptureCoordinatorOptions = {}) {
    this.store = store;
    this.#options = options;
  }

  #ctx(captureId: string, episodeId: string): EventContext {
    return {
      captureId,
      episodeId,
      source: { host: "harness", adapter: "coordinator", model: null },
      ...(this.#options.now ? { now: this.#options.now } : {}),
    };
  }

  #emit(ev: UnsealedEvent): void {
    const sink = this.#options.sinkFor?.(ev.capture_id) ??
      this.store.sink(ev.capture_id);
    sink.emit(ev);
  }

  #require(captureId: string): void {
    validateId("capture", captureId);
    if (!this.store.hasCapture(captureId)) {
      throw new CaptureNotFoundError(captureId, this.store.root);
    }
  }

  /**
   * Start a capture.
   *
   * @param options Id, label, activation.
   * @returns The capture id and when it started.
   * @throws {CaptureExistsError} When the id is taken.
   */
  startCapture(
    options: StartCaptureOptions = {},
  ): { capture_id: string; started_at: string; active: boolean } {
    const now = (this.#options.now ?? (() => new Date()))();
    const id = options.id ??
      `cap_${
        now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)
      }_${crypto.randomUUID().slice(0, 4)}`;
    validateId("capture", id);
    if (this.store.hasCapture(id)) throw new CaptureExistsError(id);
    const ev = annotation(this.#ctx(id, CAPTURE_EPISODE), {
      type: "capture.started",
      ...(options.label ? { label: options.label } : {}),
    }, { timestamp: now.toISOString() });
    this.#emit(ev);
    const activate = options.activate ?? true;
    if (activate) writeActiveCapture(this.store.root, id);
    return { capture_id: id, started_at: ev.timestamp, active: activate };
  }

  /**
   * Finish a capture (and stop routing hook events to it).
   *
   * @param captureId The capture.
   * @returns When it finished.
   * @throws {CaptureNotFoundError} For an unknown capture.
   */
  finishCapture(
    captureId: string,
  ): { capture_id: string; finished_at: string } {
    this.#require(captureId);
    const ev = annotation(this.#ctx(captureId, CAPTURE_EPISODE), {
      type: "capture.finished",
    });
    this.#emit(ev);
    if (readActiveCapture(this.store.root) === captureId) {
      writeActiveCapture(this.store.root, null);
    }
    return { capture_id: captureId, finished_at: ev.timestamp };
  }

  /**
   * Why an outcome cannot be recorded for this episode, or null when it
   * can: the capture is finished, or does not hold the episode (as its
   * index knows it now; `_capture` is the capture's own record, never an
   * episode). Writes nothing.
   *
   * @param captureId The capture.
   * @param episodeId The episode.
   * @returns The error `markOutcome` would throw, or null.
   * @throws {CaptureNotFoundError} For an unknown capture.
   */
  outcomeProblem(
    captureId: string,
    episodeId: string,
  ): CaptureFinishedError | EpisodeNotFoundError | null {
    this.#require(captureId);
    validateId("episode", episodeId);
    if (this.store.getCapture(captureId)?.status === "finished") {
      return new CaptureFinishedError(captureId);
    }
    const known = this.store.listEpisodes(captureId).map((e) => e.episode_id)
      .filter((id) => id !== CAPTURE_EPISODE);
    return known.includes(episodeId) && episodeId !== CAPTURE_EPISODE
      ? null
      : new EpisodeNotFoundError(captureId, episodeId, known);
  }

  /**
   * {@linkcode CaptureCoordinator.markOutcome}, after letting the server
   * that owns the store catch up when the capture or the episode is not
   * there yet (the model gateway records an exchange just after answering
   * it, so a client may name an episode a moment before it is stored).
   *
   * @param captureId The capture.
   * @param episodeId The episode.
   * @param options Success flag, outcome object, note.
   * @returns The event recorded.
   * @throws {CaptureNotFoundError} For an unknown capture.
   * @throws {CaptureFinishedError} For a finished capture.
   * @throws {EpisodeNotFoundError} For an episode the capture does not hold.
   */
  async recordOutcome(
    captureId: string,
    episodeId: string,
    options: OutcomeOptions,
  ): Promise<UnsealedEvent> {
    let unknown: boolean;
    try {
      unknown = this.outcomeProblem(captureId, episodeId) instanceof
        EpisodeNotFoundError;
    } catch (err) {
      if (!(err instanceof CaptureNotFoundError)) throw err;
      unknown = true;
    }
    if (unknown) await this.#caughtUp();
    return this.markOutcome(captureId, episodeId, options);
  }

  #caughtUp(): Promise<void> {
    if (this.#options.caughtUp) return this.#options.caughtUp();
    if (!this.store.readOnly) return Promise.resolve();
    const url = readLockOwner(this.store.root)?.url;
    return url ? serverCaughtUp(url) : Promise.resolve();
  }

  /**
   * Record an episode's task outcome as chained evidence. Only for an
   * episode the capture holds: anything else is refused and nothing is
   * written.
   *
   * @param captureId The capture.
   * @param episodeId The episode.
   * @param options Success flag, outcome object, note.
   * @returns The event recorded.
   * @throws {CaptureNotFoundError} For an unknown capture.
   * @throws {CaptureFinishedError} For a finished capture.
   * @throws {EpisodeNotFoundError} For an episode the capture does not
   *   hold (naming the closest ids it does).
   */
  markOutcome(
    captureId: string,
    episodeId: string,
    options: OutcomeOptions,
  ): UnsealedEvent {
    if (typeof options.success !== "boolean") {
      throw new TypeError("An outcome needs success: true or false");
    }
    const problem = this.outcomeProblem(captureId, episodeId);
    if (problem) throw problem;
    const outcome = {
      ...(options.outcome ?? {}),
      ...(options.note !== undefined ? { note: options.note } : {}),
    };
    const ev = annotation(this.#ctx(captureId, episodeId), {
      type: "episode.outcome",
      success: options.success,
      outcome: Object.keys(outcome).length ? outcome : null,
    });
    this.#emit(ev);
    return ev;
  }

  /**
   * Summarize a capture: episodes, counts by kind, fidelity, incomplete
   * calls, chain status and recorded outcomes.
   *
   * @param captureId The capture.
   * @returns The summary.
   */
  async summarize(captureId: string): Promise<CaptureSummary> {
    const { inspection, outcomes } = await this.#read(captureId);
    return {
      ...inspection,
      outcomes,
      active: readActiveCapture(this.store.root) === captureId,
    };
  }

  /**
   * Inspect a capture: episodes, counts by kind, fidelity, incomplete
   * calls, chain status, and per episode what a package served at the
   * model gateway did (served answers, refused calls with their reasons,
   * pass-throughs and why, the estimate of tokens saved).
   *
   * @param captureId The capture.
   * @returns The inspection.
   * @throws {CaptureNotFoundError} For an unknown capture.
   */
  async inspect(captureId: string): Promise<PackagedInspection> {
    return (await this.#read(captureId, false)).inspection;
  }

  async #read(captureId: string, withOutcomes = true): Promise<{
    inspection: PackagedInspection;
    outcomes: CaptureSummary["outcomes"];
  }> {
    this.#require(captureId);
    const all = await inspectCapture(this.store, captureId);
    // The capture's own record is not an episode (it made `capture list`
    // and this table count one more than there are).
    const own = all.episodes.find((e) => e.episode_id === CAPTURE_EPISODE);
    const base = {
      ...all,
      episodes: all.episodes.filter((e) => e !== own),
      capture_events: own?.event_count ?? 0,
    };
    const outcomes: CaptureSummary["outcomes"] = {};
    const trackers = new Map<string, PackageActivityTracker>();
    // Only the model gateway's events tell of a package: a capture with
    // none needs no second pass for it.
    const model = (base.counts_by_kind["model.responded"] ?? 0) +
      (base.counts_by_kind["model.requested"] ?? 0);
    if (!withOutcomes && model === 0) {
      return { inspection: { ...base, package: null }, outcomes };
    }
    for await (
      const ev of this.store.readEvents(captureId, { resolveBlobs: false })
    ) {
      if (ev.kind === "annotation" && ev.payload.type === "episode.outcome") {
        outcomes[ev.episode_id] = {
          success: ev.payload.success as boolean,
          outcome: (ev.payload.outcome as Record<string, unknown>) ?? null,
        };
      }
      let t = trackers.get(ev.episode_id);
      if (!t) trackers.set(ev.episode_id, t = new PackageActivityTracker());
      t.observe(ev);
    }
    const activity = new Map(
      [...trackers].map(([id, t]) => [id, t.result()]),
    );
    const episodes = base.episodes.map((e): PackagedEpisode => {
      const a = activity.get(e.episode_id);
      return a ? { ...e, package: a } : e;
    });
    return {
      inspection: {
        ...base,
        episodes,
        package: packageTotals(activity.values()),
      },
      outcomes,
    };
  }

  /**
   * The exact-lineage report.
   *
   * @param captureId The capture.
   * @returns The deterministic report.
   */
  lineageReport(captureId: string): Promise<LineageReport> {
    this.#require(captureId);
    return buildLineageReport(this.store, captureId, {
      canonical: this.#options.canonical,
    });
  }

  /**
   * Compile captures into a behavior package (the same function as
   * `compile.ts`), write it under `<root>/packages/` (or `out`) and record
   * it in the `packages` table.
   *
   * @param captureIds Captures whose episodes to compile.
   * @param options Compiler options and the output directory.
   * @returns The package, where it was written, and a summary.
   */
  async compile(
    captureIds: string[],
    options: CompileOptions & { out?: string } = {},
  ): Promise<
    {
      package: BehaviorPackage;
      file: string;
      summary: string;
      registered: boolean;
    }
  > {
    if (captureIds.length === 0) {
      throw new TypeError("compile needs at least one capture id");
    }
    const episodes = [];
    for (const id of captureIds) {
      this.#require(id);
      episodes.push(...await loadEpisodes(this.store, id));
    }
    const result = compileBehavior(episodes, {
      canonical: this.#options.canonical,
      ...options,
    });
    const pkg = result.package;
    const dir = options.out ?? join(this.store.root, "packages");
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(
      dir,
      `${pkg.manifest.name}-${pkg.digest.slice(7, 19)}.package.json`,
    );
    Deno.writeTextFileSync(file, JSON.stringify(pkg, null, 2) + "\n", {
      mode: 0o600,
    });
    // Which captures it came from, beside it, so an index rebuild keeps it.
    Deno.writeTextFileSync(
      `${file}.captures.json`,
      JSON.stringify({ capture_ids: captureIds }) + "\n",
      { mode: 0o600 },
    );
    let registered = false;
    if (!this.store.readOnly) {
      this.store.registerPackage(pkg, file, captureIds);
      registered = true;
    }
    return { package: pkg, file, summary: summarizePackage(pkg), registered };
  }

  /**
   * Captures known to the index.
   *
   * @returns Capture records.
   */
  listCaptures(): CaptureRecord[] {
    return this.store.listCaptures();
  }
}
