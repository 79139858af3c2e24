/**
 * {@linkcode HttpProtocolError}: a request the listener will not read, with
 * the status that says why.
 *
 * @module
 */

/** A request the server will not read, with the status that says why. */
export class HttpProtocolError extends Error {
  /** Status to answer with (the connection is then closed). */
  readonly status: number;
  /**
   * Create an `HttpProtocolError`.
   *
   * @param status 400, 411, 413, 417, 431, 503 or 505.
   * @param message What is wrong with the request.
   */
  constructor(status: number, message: string) {
    super(message);
    this.name = "HttpProtocolError";
    this.status = status;
  }
}
