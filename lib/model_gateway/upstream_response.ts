/**
 * {@linkcode UpstreamResponse}: an upstream's answer as the gateway reads
 * it, from `fetch` ({@linkcode fromFetch}) or from the gateway's own
 * HTTP/1.1 client: status, header fields, and the body piece by piece.
 *
 * @module
 */
import { BodyPieces, type Pieces } from "./body_pieces.ts";
import type { HeaderView } from "./http1_client/answer_head.ts";

/** An upstream's answer, its body not read yet. */
export interface UpstreamResponse {
  /** The status code. */
  status: number;
  /** The header fields (lower-case names). */
  headers: HeaderView;
  /** The body, or null when the answer has none. */
  body: Pieces | null;
  /**
   * Read the whole body.
   *
   * @returns Its bytes (empty when there is none).
   */
  bytes(): Promise<Uint8Array>;
}

/**
 * A `fetch` response as an {@linkcode UpstreamResponse}.
 *
 * @param res The response.
 * @returns It, its body read through {@linkcode BodyPieces}.
 */
export function fromFetch(res: Response): UpstreamResponse {
  let pieces: BodyPieces | null = null;
  return {
    status: res.status,
    headers: res.headers,
    // Made when first asked for: a reader locks the body, and `bytes`
    // reads it whole instead.
    get body() {
      if (!res.body) return null;
      pieces ??= new BodyPieces(res.body);
      return pieces;
    },
    bytes: () => res.bytes(),
  };
}
