/**
 * A minimal HTTP/1.1 keep-alive client over TCP, so the load generator is
 * not the bottleneck of a server benchmark. It sends one request at a time
 * per connection and reads responses with Content-Length (or none).
 *
 * @module
 */

const enc = new TextEncoder();
const dec = new TextDecoder();

/** One keep-alive connection. */
export class KeepAliveConnection {
  readonly #conn: Deno.TcpConn;
  #buf = new Uint8Array(0);
  readonly #chunk = new Uint8Array(64 * 1024);

  readonly #host: string;

  private constructor(conn: Deno.TcpConn, port: number) {
    this.#host = `127.0.0.1:${port}`;
    this.#conn = conn;
  }

  /**
   * Connect.
   * @param port Port on 127.0.0.1.
   * @returns The connection.
   */
  static async open(port: number): Promise<KeepAliveConnection> {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.setNoDelay(true);
    return new KeepAliveConnection(conn, port);
  }

  /**
   * POST a body and wait for the whole response.
   * @param path Request path.
   * @param body Body text.
   * @returns The status code.
   */
  async post(path: string, body: string): Promise<number> {
    const b = enc.encode(body);
    const head = enc.encode(
      `POST ${path} HTTP/1.1\r\nhost: ${this.#host}\r\ncontent-type: application/json\r\ncontent-length: ${b.length}\r\n\r\n`,
    );
    const req = new Uint8Array(head.length + b.length);
    req.set(head);
    req.set(b, head.length);
    let done = 0;
    while (done < req.length) {
      done += await this.#conn.write(req.subarray(done));
    }
    return await this.#readResponse();
  }

  async #fill(): Promise<void> {
    const n = await this.#conn.read(this.#chunk);
    if (n === null) throw new Error("connection closed");
    const next = new Uint8Array(this.#buf.length + n);
    next.set(this.#buf);
    next.set(this.#chunk.subarray(0, n), this.#buf.length);
    this.#buf = next;
  }

  async #readResponse(): Promise<number> {
    let end = -1;
    for (;;) {
      end = indexOfCrlfCrlf(this.#buf);
      if (end >= 0) break;
      await this.#fill();
    }
    const head = dec.decode(this.#buf.subarray(0, end));
    const status = Number(head.slice(9, 12));
    const m = /content-length:\s*(\d+)/i.exec(head);
    const len = m ? Number(m[1]) : 0;
    while (this.#buf.length < end + 4 + len) await this.#fill();
    this.#buf = this.#buf.slice(end + 4 + len);
    return status;
  }

  /** Close. */
  close(): void {
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }
}

function indexOfCrlfCrlf(b: Uint8Array): number {
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}
