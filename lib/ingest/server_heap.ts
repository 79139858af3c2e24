/**
 * How the ingest server's process is started: {@linkcode SERVER_V8_FLAGS},
 * the V8 heap setting `deno task serve`, `deno task daemon` and
 * `serve --detach` run it with.
 *
 * @module
 */

/**
 * The server's V8 flags: an initial old generation of 128 MB. The server's
 * live heap is small (~10–20 MB), but recording model exchanges churns
 * through it; with V8's default limits for so small a heap a major GC came
 * every ~250 ms under load, each pausing every request for 2–15 ms (the
 * gateway's c=1 p99, `bench gateway`). With this the heap may grow to about
 * 128 MB of garbage before the first one (RSS up to ~200 MB under load).
 */
export const SERVER_V8_FLAGS = "--v8-flags=--initial-old-space-size=128";
