/**
 * How the ingest server's process is started: {@linkcode SERVER_V8_FLAGS},
 * the V8 heap setting `deno task serve`, `deno task daemon` and
 * `serve --detach` run it with.
 *
 * @module
 */

/**
 * The server's V8 flags: an initial old generation of 64 MB. The server's
 * live heap is small (~10–20 MB), but recording model exchanges churns
 * through it; with V8's default limits for so small a heap a major GC came
 * every ~250 ms under streamed load, each pausing every request for 2–15 ms
 * (the gateway's c=1 SSE p99 in `bench gateway`: +9.8 ms added, +5.1 with
 * this). Measured in the same rounds, 96 and 128 MB did no better and cost
 * more memory: RSS after 4,000 streamed requests 198 MB with V8's default,
 * 234 MB with 64, 352 MB with 128.
 */
export const SERVER_V8_FLAGS = "--v8-flags=--initial-old-space-size=64";
