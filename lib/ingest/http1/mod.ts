/**
 * The ingest server's own HTTP/1.1 listener: {@linkcode Http1Server} hands
 * each request, read whole, to a handler as an {@linkcode IngestRequest} and
 * writes the {@linkcode IngestAnswer} it returns; {@linkcode ConnectionStats}
 * are its counters (shown on `/health`).
 *
 * The files beside this one are its mechanism (parsing, chunked bodies,
 * encoding answers, time-outs); the rest of `lib/` imports only this face.
 * Of the rest of `lib/ingest/` the listener uses only the two leaves it
 * shares with the fetch path: `PayloadTooLargeError` and `decodeUtf8`.
 *
 * @module
 */
export { Http1Server } from "./_server.ts";
export type { AnswerPieces, IngestAnswer, IngestRequest } from "./_exchange.ts";
export type { ConnectionStats } from "./_options.ts";
