/**
 * {@linkcode UpstreamTransport}: the client end of MCP's stdio transport, an
 * upstream MCP server run as a child process. Its answers are read with a
 * bound on each message: an answer over the limit becomes a JSON-RPC error
 * for the request it answers (the process keeps running, and so does its
 * state). Output that is not JSON-RPC is handed to `onrefused`, with what
 * it said, unless a JSON-RPC message follows within `junkQuietMs` (then it
 * was a stray log line, which the SDK's client ignores too). Closing
 * follows MCP's stdio shutdown: close the upstream's stdin, wait, SIGTERM,
 * wait, SIGKILL.
 *
 * @module
 */
import {
  type Frame,
  JsonLineReader,
  type JsonRpcMessage,
} from "./_json_lines.ts";
import {
  ANSWER_TOO_LARGE_CODE,
  DEFAULT_MAX_MESSAGE_BYTES,
  formatBytes,
  REQUEST_TOO_LARGE_CODE,
} from "./message_limit.ts";

/** What the upstream wrote that could not be delivered as a message. */
export type RefusedOutput =
  | { kind: "junk"; bytes: number; text: string; reason: string }
  | { kind: "oversized"; bytes: number; limitBytes: number };

/** Options of {@linkcode UpstreamTransport}. */
export interface UpstreamTransportOptions {
  /** Command to run. */
  command: string;
  /** Its arguments. */
  args?: string[];
  /** Its whole environment. */
  env?: Record<string, string>;
  /** Working directory. */
  cwd?: string;
  /**
   * Where its stderr goes ("pipe": read and kept, see `stderrTail`).
   * @default "inherit"
   */
  stderr?: "inherit" | "ignore" | "pipe";
  /**
   * Largest message read, in bytes.
   * @default 10485760 (10 MiB)
   */
  maxMessageBytes?: number;
  /**
   * How long the upstream gets to exit after its stdin closes, and again
   * after SIGTERM, in milliseconds.
   * @default 1000
   */
  shutdownGraceMs?: number;
  /**
   * How long output that is not JSON-RPC may go unfollowed by a message
   * before it is reported (`onrefused`), in milliseconds.
   * @default 1000
   */
  junkQuietMs?: number;
}

const encoder = new TextEncoder();
const STDERR_KEEP = 2048;

/** An upstream MCP server as a child process, speaking JSON-RPC lines. */
export class UpstreamTransport {
  /** Called with each message read. */
  onmessage?: (message: JsonRpcMessage) => void;
  /** Called when a read or write fails. */
  onerror?: (error: Error) => void;
  /** Called once, when the process is gone. */
  onclose?: () => void;
  /**
   * Called with output that was not delivered: a line that is not JSON-RPC
   * (when no message follows it within `junkQuietMs`), or an oversized
   * line whose id could not be read (at once).
   */
  onrefused?: (output: RefusedOutput) => void;
  readonly #options: UpstreamTransportOptions;
  readonly #lines: JsonLineReader;
  #child: Deno.ChildProcess | null = null;
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #reading: Promise<void> = Promise.resolve();
  #exited = false;
  #closing: Promise<void> | null = null;
  #stderrTail = "";
  #junk:
    | { timer: ReturnType<typeof setTimeout>; output: RefusedOutput }
    | null = null;

  /**
   * Create an `UpstreamTransport`.
   *
   * @param options Command, environment, limits.
   * @throws {RangeError} For a message limit that is not a positive whole number.
   */
  constructor(options: UpstreamTransportOptions) {
    this.#options = options;
    this.#lines = new JsonLineReader(
      options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    );
  }

  /** The process id, once started. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** The last characters the upstream wrote to stderr (with `stderr: "pipe"`). */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** The start of a line the upstream began and has not ended, if any. */
  get partialLine(): { bytes: number; text: string } | null {
    const bytes = this.#lines.partialBytes;
    return bytes > 0 ? { bytes, text: this.#lines.partialText } : null;
  }

  /**
   * Start the process.
   *
   * @throws {Error} When started twice, or the command cannot be run.
   */
  start(): Promise<void> {
    try {
      this.#spawn();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #spawn(): void {
    if (this.#child) {
      throw new Error("This UpstreamTransport is already started");
    }
    const o = this.#options;
    const stderr = o.stderr ?? "inherit";
    const child = new Deno.Command(o.command, {
      args: o.args ?? [],
      ...(o.env ? { env: o.env, clearEnv: true } : {}),
      ...(o.cwd ? { cwd: o.cwd } : {}),
      stdin: "piped",
      stdout: "piped",
      stderr: stderr === "ignore"
        ? "null"
        : stderr === "pipe"
        ? "piped"
        : "inherit",
    }).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#reader = child.stdout.getReader();
    this.#reading = this.#read(this.#reader);
    if (stderr === "pipe") this.#keepStderr(child.stderr);
    child.status.then(async () => {
      this.#exited = true;
      // Let the last answers through (a grandchild may hold stdout open).
      await settlesWithin(this.#reading, 200);
      await this.close();
    });
  }

  async #read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const frame of this.#lines.push(value)) await this.#take(frame);
      }
      for (const frame of this.#lines.end()) await this.#take(frame);
    } catch (err) {
      if (!this.#closing) this.onerror?.(err as Error);
    }
    // The upstream closed its stdout: it can answer nothing more.
    if (!this.#exited) this.close();
  }

  async #keepStderr(stderr: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stderr) {
        this.#stderrTail = (this.#stderrTail +
          decoder.decode(chunk, { stream: true })).slice(-STDERR_KEEP);
      }
    } catch { /* the process is gone */ }
  }

  async #take(frame: Frame): Promise<void> {
    if (frame.kind === "message") {
      this.#clearJunk();
      this.onmessage?.(frame.message);
      return;
    }
    if (frame.kind === "junk") {
      this.#junk ??= {
        output: frame,
        timer: setTimeout(() => {
          const output = this.#junk?.output;
          this.#junk = null;
          if (output) this.onrefused?.(output);
        }, this.#options.junkQuietMs ?? 1000),
      };
      return;
    }
    const limit = this.#lines.maxBytes;
    const data = {
      reason: "message_too_large",
      message_bytes: frame.bytes,
      limit_bytes: limit,
    };
    if (frame.id === null) {
      this.onrefused?.({
        kind: "oversized",
        bytes: frame.bytes,
        limitBytes: limit,
      });
    } else if (frame.keys.includes("method")) {
      // A request of the upstream's own: refuse it to the upstream.
      await this.send({
        jsonrpc: "2.0",
        id: frame.id,
        error: {
          code: REQUEST_TOO_LARGE_CODE,
          message: `Request of ${
            formatBytes(frame.bytes)
          } is over the message limit of ${
            formatBytes(limit)
          }; it was dropped unread`,
          data,
        },
      }).catch((err) => this.onerror?.(err));
    } else {
      // An answer: it becomes an error answer to the same request.
      this.onmessage?.({
        jsonrpc: "2.0",
        id: frame.id,
        error: {
          code: ANSWER_TOO_LARGE_CODE,
          message: `Answer of ${
            formatBytes(frame.bytes)
          } is over the message limit of ${
            formatBytes(limit)
          }; it was dropped unread`,
          data,
        },
      });
    }
  }

  #clearJunk(): void {
    if (this.#junk) clearTimeout(this.#junk.timer);
    this.#junk = null;
  }

  /**
   * Write one message to the upstream's stdin.
   *
   * @param message The message.
   * @throws {Error} When the process is not running or the write fails.
   */
  async send(message: JsonRpcMessage): Promise<void> {
    if (!this.#writer || this.#closing || this.#exited) {
      throw new Error("The upstream process is not running");
    }
    await this.#writer.write(encoder.encode(JSON.stringify(message) + "\n"));
  }

  /**
   * Stop the process (close its stdin; SIGTERM, then SIGKILL, each after
   * the grace time) and call `onclose` once it is gone.
   */
  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    const child = this.#child;
    if (child) {
      const grace = this.#options.shutdownGraceMs ?? 1000;
      this.#writer?.close().catch(() => {});
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        if (await settlesWithin(child.status, grace)) break;
        try {
          child.kill(signal);
        } catch { /* it exited meanwhile */ }
      }
      await child.status;
      if (!await settlesWithin(this.#reading, 200)) {
        await this.#reader?.cancel().catch(() => {});
      }
    }
    this.#clearJunk();
    this.onclose?.();
  }
}

/** Whether a promise settles within `ms` (the timer is cleared either way). */
async function settlesWithin(
  promise: Promise<unknown>,
  ms: number,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) =>
    timer = setTimeout(() => r(false), ms)
  );
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
