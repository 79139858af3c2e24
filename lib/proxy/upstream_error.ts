/**
 * How an upstream's failures read: {@linkcode UpstreamError} for an upstream
 * that cannot answer, the wording of output it wrote that is not a
 * deliverable message, and the one mapping from a failed call's error to
 * what the caller is told.
 *
 * @module
 */
import {
  ANSWER_TOO_LARGE_CODE,
  formatBytes,
  MessageTooLargeError,
} from "./message_limit.ts";
import type { RefusedOutput } from "./upstream_transport.ts";

/** Where an upstream stands. */
export type UpstreamState = "idle" | "starting" | "ready" | "exited" | "failed";

/** An upstream that cannot answer (exited, failed to start, timed out). */
export class UpstreamError extends Error {
  /** The upstream's server name. */
  readonly server: string;
  /** Its state when the call failed. */
  readonly state: UpstreamState;
  /**
   * Create a `UpstreamError`.
   *
   * @param server Server name.
   * @param state Its state.
   * @param message What happened.
   * @param options Cause.
   */
  constructor(
    server: string,
    state: UpstreamState,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "UpstreamError";
    this.server = server;
    this.state = state;
  }
}

/**
 * What an upstream wrote that is not a deliverable message, as the end of
 * a sentence ("answered tools/list with …").
 *
 * @param output The refused output.
 * @returns The wording, quoting what it wrote.
 */
export function describeRefused(output: RefusedOutput): string {
  return output.kind === "junk"
    ? `something that is ${output.reason}: ${JSON.stringify(output.text)}${
      output.bytes > output.text.length ? ` (${output.bytes} bytes)` : ""
    }`
    : `a message of ${formatBytes(output.bytes)}, over the message limit of ${
      formatBytes(output.limitBytes)
    }, whose id could not be read`;
}

/**
 * The error a request waiting on an upstream fails with when the upstream
 * writes something that is not a deliverable message.
 *
 * @param output The refused output.
 * @param message What the request was answered with.
 * @returns A `SyntaxError` for junk, a {@linkcode MessageTooLargeError} for
 *   an oversized message.
 */
export function refusedError(output: RefusedOutput, message: string): Error {
  return output.kind === "junk"
    ? new SyntaxError(message)
    : new MessageTooLargeError(message, {
      messageBytes: output.bytes,
      limitBytes: output.limitBytes,
      code: ANSWER_TOO_LARGE_CODE,
    });
}

/** What {@linkcode callError} knows of the upstream when a call failed. */
export interface CallErrorContext {
  /** The upstream's server name. */
  server: string;
  /** The tool called, by the upstream's own name. */
  name: string;
  /** The upstream's state now. */
  state: UpstreamState;
  /** A sentence on the upstream's state. */
  describe: () => string;
  /** The call time-out in milliseconds. */
  timeoutMs: number;
  /** A line the upstream began and did not end, or null. */
  partial: { bytes: number; text: string } | null;
  /** The last thing it wrote that was not an answer, or null. */
  lastJunk: string | null;
}

/**
 * The error a failed tool call is reported with.
 *
 * @param err What the call threw.
 * @param context The upstream and the call.
 * @returns A {@linkcode MessageTooLargeError} for an answer over a limit,
 *   an {@linkcode UpstreamError} for an upstream that cannot answer, else
 *   `err` itself.
 */
export function callError(err: unknown, context: CallErrorContext): Error {
  const { server, name, state } = context;
  const e = err as { code?: number; data?: { reason?: string } };
  if (err instanceof MessageTooLargeError) {
    return new MessageTooLargeError(
      `Upstream "${server}" ${err.message}; the upstream keeps running`,
      {
        messageBytes: err.messageBytes,
        limitBytes: err.limitBytes,
        code: err.code,
      },
      { cause: err },
    );
  }
  if (e.data?.reason === "message_too_large") {
    const d = err as { data: { message_bytes: number; limit_bytes: number } };
    return new MessageTooLargeError(
      `Upstream "${server}" answered tools/call "${name}" with ${
        formatBytes(d.data.message_bytes)
      }, over the proxy's message limit of ${
        formatBytes(d.data.limit_bytes)
      }; the answer was dropped and the upstream keeps running`,
      {
        messageBytes: d.data.message_bytes,
        limitBytes: d.data.limit_bytes,
        code: ANSWER_TOO_LARGE_CODE,
      },
      { cause: err },
    );
  }
  if (err instanceof SyntaxError) {
    return new UpstreamError(
      server,
      state,
      `upstream "${server}" ${err.message}`,
      { cause: err },
    );
  }
  if (state !== "ready") {
    return new UpstreamError(server, state, context.describe(), {
      cause: err,
    });
  }
  if (e.code === -32001) {
    const { partial, lastJunk } = context;
    return new UpstreamError(
      server,
      "ready",
      `upstream "${server}" did not answer ${name} within ${context.timeoutMs} ms` +
        (partial
          ? `; it wrote ${partial.bytes} bytes of a line it did not end: ${
            JSON.stringify(partial.text)
          }`
          : "") +
        (lastJunk
          ? `; the last thing it wrote that was not an answer: ${lastJunk}`
          : ""),
      { cause: err },
    );
  }
  return err as Error;
}
