/**
 * What the ingest handler sees of HTTP: an {@linkcode IngestRequest} in, an
 * {@linkcode IngestAnswer} out. The server's own listener builds requests
 * straight from the bytes it read (no `Request`, no body stream: they were a
 * fifth of the server's CPU per event); {@linkcode fromRequest} and
 * {@linkcode toResponse} connect the same handler to the fetch API.
 *
 * @module
 */
import { readBody } from "./body.ts";

/** One request, as the ingest handler reads it. */
export interface IngestRequest {
  /** Method, e.g. `POST`. */
  readonly method: string;
  /** Path and query as sent, e.g. `/hook/host_a?cap=c1`. */
  readonly target: string;
  /**
   * A header's value.
   *
   * @param name Lower-case name.
   * @returns The value (repeated headers joined with `, `), or null.
   */
  header(name: string): string | null;
  /**
   * The body as text.
   *
   * @param limit Most bytes accepted.
   * @returns The text.
   * @throws {PayloadTooLargeError} Past `limit`.
   * @throws {SyntaxError} When it is not UTF-8.
   */
  text(limit: number): Promise<string>;
  /** Drop the body unread. */
  discard(): Promise<void>;
}

/** One answer of the ingest handler. */
export interface IngestAnswer {
  /** HTTP status. */
  status: number;
  /** Header names (lower case) and values. */
  headers: Record<string, string>;
  /** Body text, or null for none. */
  body: string | null;
}

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
    text: (limit) => readBody(req, limit),
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
  return new Response(answer.body, {
    status: answer.status,
    headers: answer.headers,
  });
}
