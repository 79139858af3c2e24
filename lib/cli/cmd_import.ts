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
  const { digest, episodes } = a.format === "otlp"
    ? convertOtlp(await Deno.readFile(a.file), {
      captureId: a.capture,
      fileName: basename(a.file),
    })
    : convertTrajectories(
      await Deno.readTextFile(a.file),
      {
        format: a.format as ImportFormat,
        captureId: a.capture,
        fileName: basename(a.file),
        tools: a.tools ? a.tools.split(",").map((t) => t.trim()) : null,
      },
    );
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
    const clash = episodes.find((e) => existing.has(e.episode_id));
    if (clash) {
      throw new Error(
        `Capture "${a.capture}" already has episode ${clash.episode_id}; import into another capture; nothing was imported`,
      );
    }
  }
  // One write for the whole file: all of it is recorded, or none.
  const all = episodes.flatMap((e) => e.events);
  store.sink(a.capture).emitMany(all);
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
  };
  io.out(
    a.json
      ? JSON.stringify(summary, null, 2)
      : `Imported ${episodes.length} episodes (${all.length} events, ${succeeded} successful) from ${a.file} into capture ${a.capture}`,
  );
  return 0;
}
