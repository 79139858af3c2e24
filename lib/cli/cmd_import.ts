/**
 * `ingest.ts import --format F FILE --capture ID`: existing trajectories
 * into a capture, all or nothing, once per file.
 *
 * @module
 */
import { basename } from "node:path";
import {
  IMPORT_FORMATS,
  type ImportFormat,
} from "../importers/trajectories.ts";
import {
  planOfEpisodes,
  planTrajectoryFile,
} from "../importers/import_file.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import { convertOtlp } from "../otel/import.ts";
import { UsageError } from "./io.ts";
import type { Io } from "./io.ts";
import { openForWrite } from "./cmd_store.ts";
import { postImport } from "./import_via_server.ts";
import { HarnessStore } from "../store/store.ts";
import { isStoreLocked, readLockOwner } from "../store/lock.ts";
import { importedIn, refuseRepeat } from "../importers/import_repeat.ts";

/**
 * Import one file.
 *
 * @param a Format, file, capture, root, JSON output.
 * @param io Output.
 * @returns Exit code.
 */
export async function importCommand(
  a: {
    format?: string;
    file?: string;
    capture?: string;
    tools?: string;
    root: string;
    json: boolean;
    /** Bearer token of a running server (`HARNESS_INGEST_TOKEN`). */
    token?: string;
  },
  io: Io,
): Promise<number> {
  const formats = [...IMPORT_FORMATS, "otlp"];
  if (!a.format || !formats.includes(a.format)) {
    throw new UsageError(`import needs --format ${formats.join("|")}`);
  }
  if (!a.file || !a.capture) {
    throw new UsageError("import needs a FILE and --capture ID");
  }
  const plan = a.format === "otlp"
    ? planOfEpisodes(convertOtlp(await Deno.readFile(a.file), {
      captureId: a.capture,
      fileName: basename(a.file),
    }))
    : await planTrajectoryFile({
      format: a.format as ImportFormat,
      path: a.file,
      captureId: a.capture,
      fileName: basename(a.file),
      tools: a.tools ? a.tools.split(",").map((t) => t.trim()) : null,
    });
  const { digest } = plan;
  Deno.mkdirSync(a.root, { recursive: true, mode: 0o700 });
  // A running server owns the store: import through it (README order:
  // serve, then import), after the same checks against what it holds; the
  // server checks again as the events arrive, so that of two imports of
  // one file at once only one is taken (409 for the other).
  const server = isStoreLocked(a.root) ? readLockOwner(a.root)?.url : undefined;
  if (server) {
    using store = new HarnessStore(a.root, { readOnly: true, index: false });
    await refuseRepeatIn(store, { capture: a.capture, file: a.file }, plan);
    const events: UnsealedEvent[] = [];
    for await (const batch of plan.batches()) events.push(...batch);
    await postImport({ url: server, events, token: a.token, root: a.root });
  } else {
    using store = openForWrite(a.root);
    await refuseRepeatIn(store, { capture: a.capture, file: a.file }, plan);
    // One run for the whole file, read a trajectory at a time: all of it is
    // recorded, or none.
    await plan.write(store.sink(a.capture));
  }
  const summary = {
    capture_id: a.capture,
    file: a.file,
    file_sha256: digest,
    episodes: plan.episode_ids.length,
    events: plan.events,
    successful: plan.successful,
    with_outcome: plan.with_outcome,
    via: server ?? null,
  };
  io.out(
    a.json
      ? JSON.stringify(summary, null, 2)
      : `Imported ${plural(summary.episodes, "episode")} (${
        plural(summary.events, "event")
      }, ${outcomesText(summary)}) from ${a.file} into capture ${a.capture}${
        server ? ` (through the server at ${server})` : ""
      }`,
  );
  return 0;
}

/**
 * Refuse a file imported before, or episodes the capture already has (the
 * server checks again when the events arrive: two imports at once).
 *
 * @param store The store (read).
 * @param a The file and capture.
 * @param f The file's digest and episode ids.
 * @throws {ImportRepeatError} Already imported, or an episode id clash.
 */
async function refuseRepeatIn(
  store: HarnessStore,
  a: { file: string; capture: string },
  f: { digest: string; episode_ids: readonly string[] },
): Promise<void> {
  if (!store.hasCapture(a.capture)) return;
  const held = await importedIn(
    store.readEvents(a.capture, { resolveBlobs: false }),
  );
  refuseRepeat(held, {
    capture: a.capture,
    digest: f.digest,
    episodes: [...f.episode_ids],
  }, a.file);
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? "" : "s"}`;
}

/**
 * What the file says of outcomes: episodes without one are unknown, not
 * failed ("0 successful" read as "all failed").
 */
function outcomesText(
  s: { episodes: number; successful: number; with_outcome: number },
): string {
  if (s.with_outcome === 0) return "no outcomes recorded";
  if (s.with_outcome === s.episodes) return `${s.successful} successful`;
  return `${s.successful} successful of ${s.with_outcome} with an outcome; ${
    s.episodes - s.with_outcome
  } unknown`;
}
