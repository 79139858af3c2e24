/**
 * {@linkcode ActiveCaptureReading}: the capture a model request without
 * `x-harness-capture` goes to (the store's active capture), read about once
 * per turn of the event loop under load rather than once per request.
 *
 * @module
 */

/** The active capture as last read, reused while it cannot have changed. */
export class ActiveCaptureReading {
  readonly #root: string;
  readonly #read: () => string;
  /** The capture as last read, when (ms since the epoch), and the root's time then. */
  #last: { id: string; at: number; root: number | null } | null = null;

  /**
   * Create an `ActiveCaptureReading`.
   *
   * @param root The store root (its time tells whether the pointer moved).
   * @param read Reads the active capture (the gateway's `defaultCapture`).
   */
  constructor(root: string, read: () => string) {
    this.#root = root;
    this.#read = read;
  }

  /**
   * The capture a request goes to: the active capture as read after the
   * request arrived. A reading serves every request that arrived before it,
   * so under load the store root is looked at about once per turn of the
   * loop, not per request (a missing `active_capture` file costs an error
   * object each time).
   *
   * @param arrived When the request arrived (ms since the epoch).
   * @returns The capture id.
   */
  at(arrived: number): string {
    const last = this.#last;
    if (last !== null && last.at > arrived) return last.id;
    const at = Date.now() + 0.5;
    // The pointer is put in place by a rename (`capture start`), which
    // changes the root's entries: while they are unchanged it is as read
    // (a missing pointer costs an error object per look).
    let root: number | null = null;
    try {
      root = Deno.statSync(this.#root).mtime?.getTime() ?? null;
    } catch {
      // Read the pointer below.
    }
    if (last !== null && root !== null && last.root === root) {
      this.#last = { ...last, at };
      return last.id;
    }
    const id = this.#read();
    // Trusted only once the root's time is well past (file times can be
    // coarse: a change in the same tick would keep it).
    this.#last = {
      id,
      at,
      root: root !== null && at - root > 50 ? root : null,
    };
    return id;
  }
}
