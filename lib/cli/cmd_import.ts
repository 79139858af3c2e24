/**
 * `ingest.ts import --format F FILE --capture ID`: existing trajectories
 * into a capture, all or nothing, once per file.
 *
 * @module
 */
import { basename } from "node:path";
import {
  convertTrajectories,
  IMPORT_FORMATS,
  type ImportFormat,
} from "../importers/trajectories.ts";
import { convertOtlp } from "../otel/import.ts";
import { UsageError } from "./io.ts";
import type { Io } from "./io.ts";
import { openForWrite } from "./cmd_store.ts";
import { postImport } from "./import_via_server.ts";
import { HarnessStore } from "../store/store.ts";
import { isStoreLocked, readLockOwner } from "../store/lock.ts";

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
  const { digest, episodes } = a.format === "otlp"
    ? convertOtlp(await Deno.readFile(a.file), {
      captureId: a.capture,
      fileName: basename(a.file),
    })
    : convertTrajectories(
      a.format as ImportFormat,
      await Deno.readTextFile(a.file),
      {
        captureId: a.capture,
        fileName: basename(a.file),
        tools: a.tools ? a.tools.split(",").map((t) => t.trim()) : null,
      },
    );
  Deno.mkdirSync(a.root, { recursive: true });
  // A running server owns the store: import through it (README order:
  // serve, then import), after the same checks against what it holds.
  const server = isStoreLocked(a.root) ? readLockOwner(a.root)?.url : undefined;
  const all = episodes.flatMap((e) => e.events);
  if (server) {
    using store = new HarnessStore(a.root, { readOnly: true, index: false });
    await refuseRepeat(store, { capture: a.capture, file: a.file }, {
      digest,
      episodes,
    });
    await postImport({
      url: server,
      events: all,
      token: a.token,
      root: a.root,
    });
  } else {
    using store = openForWrite(a.root);
    await refuseRepeat(store, { capture: a.capture, file: a.file }, {
      digest,
      episodes,
    });
    // One write for the whole file: all of it is recorded, or none.
    store.sink(a.capture).emitMany(all);
  }
  const succeeded =
    episodes.filter((e) =>
      e.events.some((ev) =>
        ev.kind === "annotation" && ev.payload.success === true
      )
    ).length;
  const summary = {
    capture_id: a.capture,
    file: a.file,
    file_sha256: digest,
    episodes: episodes.length,
    events: all.length,
    successful: succeeded,
    via: server ?? null,
  };
  io.out(
    a.json
      ? JSON.stringify(summary, null, 2)
      : `Imported ${episodes.length} episodes (${all.length} events, ${succeeded} successful) from ${a.file} into capture ${a.capture}${
        server ? ` (through the server at ${server})` : ""
      }`,
  );
  return 0;
}

/**
 * Refuse a file imported before, or episodes the capture already has.
 *
 * @param store The store (read).
 * @param a The file and capture.
 * @param f The file's digest and episodes.
 * @throws {Error} Already imported, or an episode id clash.
 */
async function refuseRepeat(
  store: HarnessStore,
  a: { file: string; capture: string },
  f: { digest: string; episodes: { episode_id: string }[] },
): Promise<void> {
  if (!store.hasCapture(a.capture)) return;
  const existing = new Set<string>();
  for await (
    const ev of store.readEvents(a.capture, { resolveBlobs: false })
  ) {
    if (ev.kind !== "episode.started") continue;
    existing.add(ev.episode_id);
    const prov = (ev.payload.provenance ?? {}) as { file_sha256?: string };
    if (prov.file_sha256 === f.digest) {
      throw new Error(
        `${a.file} (${f.digest}) is already imported into capture "${a.capture}"; nothing was imported`,
      );
    }
  }
  const clash = f.episodes.find((e) => existing.has(e.episode_id));
  if (clash) {
    throw new Error(
      `Capture "${a.capture}" already has episode ${clash.episode_id}; import into another capture; nothing was imported`,
    );
  }
}
