/**
 * Import into a store a running ingest server owns: the whole file goes to
 * its `POST /ingest` in one request, which validates every event first and
 * writes each capture's events in one write — all or nothing, as a local
 * import is.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";

/** Options of {@linkcode postImport}. */
export interface PostImportOptions {
  /** The server's base URL (from the store's lock). */
  url: string;
  /** The events of the whole file. */
  events: UnsealedEvent[];
  /** Bearer token (`HARNESS_INGEST_TOKEN`). */
  token?: string;
  /** The store root (for the advice when the server refuses). */
  root: string;
}

/**
 * Send a file's events to the server that owns the store.
 *
 * @param o Server, events, token, root.
 * @returns How many events the server sealed.
 * @throws {Error} The server refused the request or did not answer; the
 *   message says what to do (nothing was recorded).
 */
export async function postImport(o: PostImportOptions): Promise<number> {
  const body = JSON.stringify(o.events);
  let res: Response;
  try {
    res = await fetch(`${o.url.replace(/\/+$/, "")}/ingest`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      },
      body,
    });
  } catch (err) {
    throw new Error(
      `The ingest server at ${o.url} (which holds the store ${o.root}) did not answer (${
        (err as Error).message
      }); nothing was imported: check it with deno task ingest status`,
      { cause: err },
    );
  }
  const text = await res.text();
  let answer: { ok?: boolean; error?: string; events?: unknown[] } = {};
  try {
    answer = JSON.parse(text);
  } catch { /* not JSON */ }
  if (res.ok && answer.ok) return answer.events?.length ?? 0;
  const why = answer.error ?? `HTTP ${res.status}`;
  const advice = res.status === 401
    ? "set HARNESS_INGEST_TOKEN to the server's token"
    : res.status === 413
    ? `the file's events (${body.length} bytes) are more than the server takes in one request: stop the server (deno task ingest stop), import, then start it again`
    : "nothing was imported";
  throw new Error(
    `The ingest server at ${o.url} refused the import (${why}): ${advice}`,
  );
}
