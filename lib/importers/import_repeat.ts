/**
 * A file is imported into a capture once: what a capture already holds of
 * imports (the files' digests, from the `provenance.file_sha256` of each
 * imported `episode.started`, and its episode ids), and the refusal of an
 * import that repeats a file or an episode id. The CLI checks it before an
 * import; the ingest server checks it again, atomically, when the events
 * arrive (two imports of one file at once: one is refused).
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";

/** An import refused because the capture holds the file or an episode already. */
export class ImportRepeatError extends Error {
  /** The capture. */
  readonly capture: string;
  /**
   * Create an `ImportRepeatError`.
   *
   * @param capture The capture.
   * @param message What is repeated and what to do.
   */
  constructor(capture: string, message: string) {
    super(message);
    this.name = "ImportRepeatError";
    this.capture = capture;
  }
}

/** What one capture holds of imports. */
export interface ImportedSet {
  /** Digests (`sha256:…`) of files imported into it. */
  digests: Set<string>;
  /** Its episode ids (null when the caller checks them elsewhere). */
  episodes: Set<string> | null;
}

/** One file's import into one capture, as its events say. */
export interface ImportClaim {
  /** The capture. */
  capture: string;
  /** The file's digest. */
  digest: string;
  /** Episode ids it starts. */
  episodes: string[];
}

/**
 * The digest of the file an `episode.started` was imported from, if any.
 *
 * @param ev An event.
 * @returns `provenance.file_sha256`, or null.
 */
export function importDigestOf(
  ev: Pick<UnsealedEvent, "kind" | "payload">,
): string | null {
  if (ev.kind !== "episode.started") return null;
  const prov = ev.payload.provenance;
  if (typeof prov !== "object" || prov === null) return null;
  const digest = (prov as { file_sha256?: unknown }).file_sha256;
  return typeof digest === "string" && digest !== "" ? digest : null;
}

/**
 * The imports a list of events carries: per capture and file digest, the
 * episodes its `episode.started` events begin.
 *
 * @param events Events (any mix; most carry none).
 * @returns The claims (empty when no event came from an imported file).
 */
export function importClaims(
  events: readonly UnsealedEvent[],
): ImportClaim[] {
  const out = new Map<string, ImportClaim>();
  for (const ev of events) {
    const digest = importDigestOf(ev);
    if (digest === null) continue;
    const key = `${ev.capture_id}\u0000${digest}`;
    let claim = out.get(key);
    if (!claim) {
      claim = { capture: ev.capture_id, digest, episodes: [] };
      out.set(key, claim);
    }
    claim.episodes.push(ev.episode_id);
  }
  return [...out.values()];
}

/**
 * Refuse an import the capture already holds: the same file, or one of its
 * episode ids.
 *
 * @param held What the capture holds.
 * @param claim The import.
 * @param file How to name the file in the message.
 * @throws {ImportRepeatError} The file or an episode is there already.
 */
export function refuseRepeat(
  held: ImportedSet,
  claim: ImportClaim,
  file: string = claim.digest,
): void {
  if (held.digests.has(claim.digest)) {
    throw new ImportRepeatError(
      claim.capture,
      `${file} (${claim.digest}) is already imported into capture "${claim.capture}"; nothing was imported`,
    );
  }
  const clash = held.episodes &&
    claim.episodes.find((id) => held.episodes!.has(id));
  if (clash) {
    throw new ImportRepeatError(
      claim.capture,
      `Capture "${claim.capture}" already has episode ${clash}; import into another capture; nothing was imported`,
    );
  }
}

/**
 * Read what a capture holds of imports from its events.
 *
 * @param events The capture's events (blob references need not be resolved).
 * @returns Its imported digests and episode ids.
 */
export async function importedIn(
  events: AsyncIterable<Pick<UnsealedEvent, "kind" | "payload" | "episode_id">>,
): Promise<{ digests: Set<string>; episodes: Set<string> }> {
  const digests = new Set<string>();
  const episodes = new Set<string>();
  for await (const ev of events) {
    if (ev.kind !== "episode.started") continue;
    episodes.add(ev.episode_id);
    const digest = importDigestOf(ev);
    if (digest !== null) digests.add(digest);
  }
  return { digests, episodes };
}
