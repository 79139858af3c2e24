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
import { convertOtlp } from "../otel/import.ts";
import { UsageError } from "./io.ts";
import type { Io } from "./io.ts";
import { openForWrite } from "./cmd_store.ts";

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
  using store = openForWrite(a.root);
  if (store.hasCapture(a.capture)) {
    const existing = new Set<string>();
    for await (
      const ev of store.readEvents(a.capture, { resolveBlobs: false })
    ) {
      if (ev.kind !== "episode.started") continue;
      existing.add(ev.episode_id);
      const prov = (ev.payload.provenance ?? {}) as { file_sha256?: string };
      if (prov.file_sha256 === digest) {
        throw new Error(
          `${a.file} (${digest}) is already imported into capture "${a.capture}"; nothing was imported`,
        );
      }
    }
    const clash = plan.episode_ids.find((id) => existing.has(id));
    if (clash) {
      throw new Error(
        `Capture "${a.capture}" already has episode ${clash}; import into another capture; nothing was imported`,
      );
    }
  }
  // One run for the whole file, read a trajectory at a time: all of it is
  // recorded, or none.
  await plan.write(store.sink(a.capture));
  const summary = {
    capture_id: a.capture,
    file: a.file,
    file_sha256: digest,
    episodes: plan.episode_ids.length,
    events: plan.events,
    successful: plan.successful,
  };
  io.out(
    a.json
      ? JSON.stringify(summary, null, 2)
      : `Imported ${summary.episodes} episodes (${summary.events} events, ${summary.successful} successful) from ${a.file} into capture ${a.capture}`,
  );
  return 0;
}
