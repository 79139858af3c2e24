/**
 * Imports through the server are idempotent per file (issue 44): events
 * whose `episode.started` names the file they were imported from
 * (`provenance.file_sha256`, as every importer writes it) are an import of
 * that file, and the server takes one import of a file per capture. The
 * check and the write happen with no wait between them, so of two imports
 * of one file sent at once, the second is refused (409) however they
 * interleave; the capture's episode ids are checked too (an import may not
 * restart an episode the capture has).
 *
 * The ledger learns a capture's imported files from its spool once (the
 * first import into it after a start), then from what it admits.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import {
  type ImportClaim,
  importedIn,
  refuseRepeat,
} from "../importers/import_repeat.ts";

interface Known {
  /** Digests of the files imported into the capture. */
  digests: Set<string>;
  /** Settles once the spool has been read. */
  loaded: Promise<void>;
}

/** The files imported into each capture, for one server. */
export class ImportLedger {
  readonly #store: HarnessStore;
  readonly #known = new Map<string, Known>();

  /**
   * Create an `ImportLedger`.
   *
   * @param store The server's store.
   */
  constructor(store: HarnessStore) {
    this.#store = store;
  }

  /**
   * Learn (once per capture) which files the captures hold.
   *
   * @param captures Capture ids.
   * @returns Settles when all are known.
   */
  async ready(captures: Iterable<string>): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const capture of captures) waits.push(this.#entry(capture).loaded);
    await Promise.all(waits);
  }

  /**
   * Check every claim against what the captures hold, then take them
   * (synchronous: call it right before the write, after
   * {@linkcode ImportLedger.ready}).
   *
   * @param claims The imports a request carries.
   * @returns Undo: forget the claims of the captures whose write failed
   *   (all but those in `written`).
   * @throws {ImportRepeatError} A file or an episode is there already.
   */
  admit(
    claims: readonly ImportClaim[],
  ): (written: ReadonlySet<string>) => void {
    for (const claim of claims) {
      const store = this.#store;
      const episodes = new Set(
        store.hasCapture(claim.capture)
          ? store.listEpisodes(claim.capture).map((e) => e.episode_id)
          : [],
      );
      refuseRepeat(
        { digests: this.#entry(claim.capture).digests, episodes },
        claim,
      );
    }
    const taken: [ImportClaim, Set<string>][] = [];
    for (const claim of claims) {
      const digests = this.#entry(claim.capture).digests;
      if (digests.has(claim.digest)) continue;
      digests.add(claim.digest);
      taken.push([claim, digests]);
    }
    return (written) => {
      for (const [claim, digests] of taken) {
        if (!written.has(claim.capture)) digests.delete(claim.digest);
      }
    };
  }

  #entry(capture: string): Known {
    let known = this.#known.get(capture);
    if (known) return known;
    const digests = new Set<string>();
    const store = this.#store;
    const loaded = store.hasCapture(capture)
      ? importedIn(store.readEvents(capture, { resolveBlobs: false })).then(
        (held) => {
          for (const d of held.digests) digests.add(d);
        },
        (err) => {
          // Read again next time (the spool may be readable then).
          this.#known.delete(capture);
          throw err;
        },
      )
      : Promise.resolve();
    known = { digests, loaded };
    this.#known.set(capture, known);
    return known;
  }
}
