/**
 * Importing a trajectory file of any size with memory that follows one
 * trajectory, not the file (a 200 MB τ² file peaked at 2.3 GB when read,
 * parsed and converted whole). The file is read twice, a piece at a time
 * (`json_stream.ts`): the first pass converts and checks every trajectory
 * and writes nothing, so every problem a file can have is found before the
 * store is touched; the second converts again and appends the events as one
 * run (`JsonlTraceSink.emitRun`), cut back whole if anything fails, so the
 * import stays all or nothing. A file that changes between the passes is
 * refused (its digest differs).
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { UnsealedEvent } from "../trace/event.ts";
import { DIGEST_PREFIX, GENESIS_HASH } from "../trace/hash.ts";
import type { ToolsetExposedPayload } from "../trace/tool_events.ts";
import { readChunks } from "../store/file_chunks.ts";
import type { JsonlTraceSink } from "../store/sink.ts";
import { ImportError } from "./import_error.ts";
import { streamJson } from "./json_stream.ts";
import { tau2Toolset } from "./tool_defs.ts";
import { EpisodeIds } from "./_episode_ids.ts";
import { listTrajectory, tau2Trajectory } from "./_trajectory.ts";
import { type ConvertOptions, convertTrajectory } from "./trajectories.ts";
import type { ImportFormat } from "./import_formats.ts";

/** Events appended per write of the run. */
const RUN_BATCH_EVENTS = 2000;

/** Options of {@linkcode planTrajectoryFile}. */
export interface TrajectoryFileOptions extends ConvertOptions {
  /** The file to import. */
  path: string;
}

/** A checked file, ready to be written into a capture. */
export interface ImportPlan {
  /** The file's digest (`sha256:` over its bytes). */
  digest: string;
  /** The episode ids it will write, in order. */
  episode_ids: string[];
  /** Events it will write. */
  events: number;
  /** Episodes whose outcome is a success. */
  successful: number;
  /** Episodes with a recorded outcome (success or failure); the rest are unknown, not failed. */
  with_outcome: number;
  /**
   * Read the file again and append its events to a capture as one run:
   * all of them, or (on any failure) none.
   *
   * @param sink The capture's sink.
   * @returns Nothing; the events are written when it resolves.
   * @throws {ImportError} When the file changed since it was checked.
   */
  write(sink: JsonlTraceSink): Promise<void>;
  /**
   * The events {@linkcode ImportPlan.write} appends, in batches, read again
   * from the file (for an import sent to a running server).
   *
   * @returns The batches, in order.
   * @throws {ImportError} When the file changed since it was checked.
   */
  batches(): AsyncIterable<UnsealedEvent[]>;
}

/** One converted episode. */
interface Episode {
  episode_id: string;
  events: UnsealedEvent[];
}

/** The top-level members of a τ² file other than its simulations. */
type Head = Record<string, unknown>;

/** One pass over a file. */
interface Pass {
  /** The digest the episodes name (a stand-in in the first pass). */
  digest: string;
  /** Takes the file's bytes. */
  hash: ReturnType<typeof createHash>;
  /** Gets a τ² file's other members. */
  head: Head;
  /** Where the tools are read from, when known (the second pass). */
  toolsetFrom?: Head;
  /** Set to the toolset the episodes got (τ²). */
  toolset?: ToolsetExposedPayload | null;
}

/**
 * Read a trajectory file a piece at a time and convert every trajectory,
 * writing nothing: the plan says what an import will write, and writes it.
 *
 * @param options The file, its format, the capture and the conversion's options.
 * @returns The plan.
 * @throws {ImportError} Naming the position of the first problem.
 */
export async function planTrajectoryFile(
  options: TrajectoryFileOptions,
): Promise<ImportPlan> {
  const head: Head = {};
  const hash = createHash("sha256");
  const episodeIds: string[] = [];
  let events = 0;
  let successful = 0;
  let withOutcome = 0;
  // The digest is not known yet: the first pass checks with a stand-in.
  const first: Pass = { digest: GENESIS_HASH, hash, head };
  for await (
    const ep of episodes(options, first)
  ) {
    episodeIds.push(ep.episode_id);
    events += ep.events.length;
    if (
      ep.events.some((ev) =>
        ev.kind === "annotation" && ev.payload.success === true
      )
    ) successful++;
    if (ep.events.some(hasOutcome)) withOutcome++;
  }
  const digest = DIGEST_PREFIX + hash.digest("hex");
  // A τ² file whose tools come after its simulations: the first pass did
  // not know them, the second gives every episode its toolset.exposed.
  if (
    options.format === "tau2" && first.toolset === null &&
    tau2Toolset(head) !== null
  ) events += episodeIds.length;
  return {
    digest,
    episode_ids: episodeIds,
    events,
    successful,
    with_outcome: withOutcome,
    async write(sink) {
      await sink.emitRun(batches(options, { digest, head }));
    },
    batches: () => batches(options, { digest, head }),
  };
}

/** The second pass: the same episodes, with the digest, in batches. */
async function* batches(
  options: TrajectoryFileOptions,
  known: { digest: string; head: Head },
): AsyncGenerator<UnsealedEvent[]> {
  const hash = createHash("sha256");
  let batch: UnsealedEvent[] = [];
  for await (
    const ep of episodes(options, {
      digest: known.digest,
      hash,
      head: { ...known.head },
      toolsetFrom: known.head,
    })
  ) {
    for (const ev of ep.events) batch.push(ev);
    if (batch.length >= RUN_BATCH_EVENTS) {
      yield batch;
      batch = [];
    }
  }
  if (DIGEST_PREFIX + hash.digest("hex") !== known.digest) {
    throw new ImportError(
      "file",
      "it changed while it was imported; import it again once nothing writes it",
    );
  }
  if (batch.length) yield batch;
}

/**
 * The episodes of a file, converted a trajectory at a time. The file's
 * bytes go through `hash`; a τ² file's other members are kept in `head`.
 */
async function* episodes(
  options: TrajectoryFileOptions,
  pass: Pass,
): AsyncGenerator<Episode> {
  const { format } = options;
  const ids = new EpisodeIds();
  let sawList = false;
  async function* hashed(): AsyncGenerator<Uint8Array> {
    for await (const chunk of readChunks(options.path)) {
      pass.hash.update(chunk);
      yield chunk;
    }
  }
  for await (const piece of streamJson(hashed(), { listKey: "simulations" })) {
    if (piece.kind === "list") {
      if ((format === "tau2") !== (piece.key === "simulations")) {
        throw notShaped(format);
      }
      sawList = true;
      continue;
    }
    if (format === "tau2") {
      if (piece.kind === "member") {
        pass.head[piece.key] = piece.value;
        continue;
      }
      const toolset = pass.toolset ??= tau2Toolset(
        pass.toolsetFrom ?? pass.head,
      );
      yield convertTrajectory(
        tau2Trajectory(piece.value, { index: piece.index, toolset }),
        {
          index: piece.index,
          ids,
          digest: pass.digest,
          options,
        },
      );
    } else {
      if (piece.kind === "member") throw notShaped(format);
      yield convertTrajectory(
        listTrajectory(piece.value, { format, index: piece.index }),
        {
          index: piece.index,
          ids,
          digest: pass.digest,
          options,
        },
      );
    }
  }
  if (!sawList) throw notShaped(format);
}

function notShaped(format: ImportFormat): ImportError {
  return new ImportError(
    "file",
    format === "tau2"
      ? "a tau2 file is an object with a simulations list"
      : `a ${format} file is a JSON list`,
  );
}

/**
 * The plan of episodes converted in memory (an OTLP file): written with one
 * append, all or nothing.
 *
 * @param converted The file's digest and its episodes.
 * @returns The plan.
 */
export function planOfEpisodes(
  converted: { digest: string; episodes: Episode[] },
): ImportPlan {
  const { digest, episodes } = converted;
  return {
    digest,
    episode_ids: episodes.map((e) => e.episode_id),
    events: episodes.reduce((n, e) => n + e.events.length, 0),
    successful:
      episodes.filter((e) =>
        e.events.some((ev) =>
          ev.kind === "annotation" && ev.payload.success === true
        )
      ).length,
    with_outcome: episodes.filter((e) => e.events.some(hasOutcome)).length,
    write(sink) {
      sink.emitMany(episodes.flatMap((e) => e.events));
      return Promise.resolve();
    },
    async *batches() {
      yield episodes.flatMap((e) => e.events);
    },
  };
}

/** An annotation that records an outcome (success or failure). */
function hasOutcome(ev: { kind: string; payload: Record<string, unknown> }) {
  return ev.kind === "annotation" && typeof ev.payload.success === "boolean";
}
