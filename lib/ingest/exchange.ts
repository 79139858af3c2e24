/**
 * {@linkcode fromRequest} and {@linkcode toResponse}: the ingest handler
 * (an {@linkcode IngestRequest} in, an {@linkcode IngestAnswer} out, as the
 * server's own listener gives it) on the fetch API.
 *
 * @module
 */
import { readBody } from "./body.ts";
import type { AnswerPieces, IngestAnswer, IngestRequest } from "./http1/mod.ts";

/**
 * A fetch `Request` as an {@linkcode IngestRequest}.
 *
 * @param req The request.
 * @returns The same request for the ingest handler.
 */
export function fromRequest(req: Request): IngestRequest {
  const url = req.url;
  const slash = url.indexOf("/", url.indexOf("//") + 2);
  return {
    method: req.method,
    target: slash < 0 ? "/" : url.slice(slash),
    header: (name) => req.headers.get(name),
    headers: () => req.headers.entries(),
    text: (limit) => readBody(req, limit),
    signal: req.signal,
    discard: async () => {
      await req.body?.cancel().catch(() => {});
    },
  };
}

/**
 * An {@linkcode IngestAnswer} as a fetch `Response`.
 *
 * @param answer The answer.
 * @returns The response.
 */
export function toResponse(answer: IngestAnswer): Response {
  const body: BodyInit | null = answer.stream ??
    (answer.pieces ? piecesStream(answer.pieces) : null) ??
    (answer.raw ? new Uint8Array(answer.raw) : answer.body);
  return new Response(body, {
    status: answer.status,
    headers: answer.headers,
  });
}

/** Answer pieces as a stream (each copied: its buffer may be reused). */
function piecesStream(pieces: AnswerPieces): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull: async (ctrl) => {
      const piece = await pieces.read();
      if (piece === null) ctrl.close();
      else ctrl.enqueue(piece.slice());
    },
    cancel: (reason) => pieces.cancel(reason),
  }, { highWaterMark: 0 });
}
