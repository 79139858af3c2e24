/**
 * {@linkcode StdioTransport}: the server end of MCP's stdio transport (this
 * process's stdin and stdout), for the proxy and `ingest.ts mcp`. Unlike
 * the SDK's `StdioServerTransport` it ends when the host closes stdin (the
 * first step of MCP's stdio shutdown), and a request over the message limit
 * gets a JSON-RPC error naming the limit instead of closing the connection.
 * It imports nothing from the SDK (its shape is the SDK's `Transport`).
 *
 * @module
 */
import {
  type Frame,
  JsonLineReader,
  type JsonRpcId,
  type JsonRpcMessage,
} from "./_json_lines.ts";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  formatBytes,
  MessageTooLargeError,
  REQUEST_TOO_LARGE_CODE,
} from "./message_limit.ts";

/** Options of {@linkcode StdioTransport}. */
export interface StdioTransportOptions {
  /**
   * Largest message read, in bytes.
   * @default 10485760 (10 MiB)
   */
  maxMessageBytes?: number;
  /**
   * Where messages come from.
   * @default Deno.stdin.readable
   */
  readable?: ReadableStream<Uint8Array>;
  /**
   * Where messages go.
   * @default Deno.stdout.writable
   */
  writable?: WritableStream<Uint8Array>;
}

const encoder = new TextEncoder();

/**
 * The server end of MCP over stdio: one JSON-RPC message per line each way.
 * Closes (and calls `onclose`) when its input ends or its output breaks.
 *
 * @example Serve an MCP server until the host closes stdin
 * ```ts ignore
 * const transport = new StdioTransport();
 * const closed = new Promise((resolve) => server.onclose = resolve);
 * await server.connect(transport);
 * await closed;
 * ```
 */
export class StdioTransport {
  /** Called with each message read. */
  onmessage?: (message: JsonRpcMessage) => void;
  /** Called when something read is refused or a read or write fails. */
  onerror?: (error: Error) => void;
  /** Called once, when the transport closes. */
  onclose?: () => void;
  readonly #options: StdioTransportOptions;
  readonly #lines: JsonLineReader;
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #started = false;
  #closed = false;
  #refused = 0;

  /**
   * Create a `StdioTransport`.
   *
   * @param options Message limit; the streams (this process's stdin and
   *   stdout unless given).
   * @throws {RangeError} For a limit that is not a positive whole number.
   */
  constructor(options: StdioTransportOptions = {}) {
    this.#options = options;
    this.#lines = new JsonLineReader(
      options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    );
  }

  /** Lines refused: over the limit, or not JSON-RPC. */
  get refused(): number {
    return this.#refused;
  }

  /** Whether the transport has closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Start reading.
   *
   * @throws {Error} When started twice.
   */
  start(): Promise<void> {
    if (this.#started) {
      throw new Error("This StdioTransport is already started");
    }
    this.#started = true;
    this.#reader = (this.#options.readable ?? Deno.stdin.readable).getReader();
    this.#writer = (this.#options.writable ?? Deno.stdout.writable)
      .getWriter();
    this.#pump();
    return Promise.resolve();
  }

  async #pump(): Promise<void> {
    const reader = this.#reader!;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const frame of this.#lines.push(value)) await this.#take(frame);
        if (this.#closed) return;
      }
      for (const frame of this.#lines.end()) await this.#take(frame);
    } catch (err) {
      if (!this.#closed) this.onerror?.(err as Error);
    }
    await this.close();
  }

  async #take(frame: Frame): Promise<void> {
    if (frame.kind === "message") {
      this.onmessage?.(frame.message);
      return;
    }
    this.#refused++;
    if (frame.kind === "junk") {
      this.onerror?.(
        new SyntaxError(
          `Dropped a line of ${frame.bytes} bytes that is ${frame.reason}: ${
            JSON.stringify(frame.text)
          }`,
        ),
      );
      return;
    }
    const limit = this.#lines.maxBytes;
    const isResponse = frame.keys.includes("result") ||
      frame.keys.includes("error");
    const err = new MessageTooLargeError(
      `${isResponse ? "Answer" : "Request"} of ${
        formatBytes(frame.bytes)
      } is over the message limit of ${
        formatBytes(limit)
      }; it was dropped unread`,
      {
        messageBytes: frame.bytes,
        limitBytes: limit,
        code: REQUEST_TOO_LARGE_CODE,
      },
    );
    if (isResponse || frame.id === null) {
      this.onerror?.(err);
      return;
    }
    await this.#answer(frame.id, err).catch((e) => this.onerror?.(e));
  }

  #answer(id: JsonRpcId, err: MessageTooLargeError): Promise<void> {
    return this.send({
      jsonrpc: "2.0",
      id,
      error: { code: err.code, message: err.message, data: err.data },
    });
  }

  /**
   * Write one message.
   *
   * @param message The message.
   * @throws {Error} When the transport is closed or the write fails (the
   *   transport then closes).
   */
  async send(message: JsonRpcMessage): Promise<void> {
    if (this.#closed || !this.#writer) {
      throw new Error("The stdio transport is closed");
    }
    try {
      await this.#writer.write(encoder.encode(JSON.stringify(message) + "\n"));
    } catch (err) {
      await this.close();
      throw new Error(`Cannot write to the host: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Stop reading and call `onclose` (once). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#reader?.cancel().catch(() => {});
    this.onclose?.();
    return Promise.resolve();
  }
}
