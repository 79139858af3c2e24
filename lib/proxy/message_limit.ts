/**
 * The bound on one MCP stdio message: {@linkcode DEFAULT_MAX_MESSAGE_BYTES}
 * (the MCP SDK's own read limit), and the error a message over it becomes.
 *
 * @module
 */

/** Largest message (one JSON-RPC line, without its newline) read from a peer: 10 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** The JSON-RPC error code of a request over the limit (Invalid Request). */
export const REQUEST_TOO_LARGE_CODE = -32600;

/** The JSON-RPC error code of an answer over the limit (Internal error). */
export const ANSWER_TOO_LARGE_CODE = -32603;

/**
 * A byte count as people read it: `10485760 bytes (10 MiB)`.
 *
 * @param bytes A count of bytes.
 * @returns The exact count, with MiB when it is at least one.
 */
export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (mib < 1) return `${bytes} bytes`;
  const shown = Number.isInteger(mib) ? String(mib) : mib.toFixed(1);
  return `${bytes} bytes (${shown} MiB)`;
}

/**
 * A message over the size limit. It carries a JSON-RPC `code` and `data`,
 * so an MCP server that throws it answers a JSON-RPC error with them.
 */
export class MessageTooLargeError extends RangeError {
  /** JSON-RPC error code. */
  readonly code: number;
  /** The size of the message, in bytes. */
  readonly messageBytes: number;
  /** The limit it is over, in bytes. */
  readonly limitBytes: number;
  /** JSON-RPC error data: `reason`, `message_bytes`, `limit_bytes`. */
  readonly data: {
    reason: "message_too_large";
    message_bytes: number;
    limit_bytes: number;
  };

  /**
   * Create a `MessageTooLargeError`.
   *
   * @param message What was refused, naming the limit.
   * @param fields The sizes and the JSON-RPC code.
   * @param options Cause.
   */
  constructor(
    message: string,
    fields: { messageBytes: number; limitBytes: number; code: number },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "MessageTooLargeError";
    this.code = fields.code;
    this.messageBytes = fields.messageBytes;
    this.limitBytes = fields.limitBytes;
    this.data = {
      reason: "message_too_large",
      message_bytes: fields.messageBytes,
      limit_bytes: fields.limitBytes,
    };
  }
}
