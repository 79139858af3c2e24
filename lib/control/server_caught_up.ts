/**
 * Let the ingest server that owns a store catch up before a reader of that
 * store trusts what it reads: the model gateway records an exchange just
 * after its answer, so an episode a client heard of a moment ago may still
 * be in its queue (`/health` `model_gateway.queued`); then `GET /captures`
 * flushes the server's index, which the reader reads. Bounded: a server
 * that does not settle in time leaves the reading as it is.
 *
 * @module
 */

/** Options of {@linkcode serverCaughtUp}. */
export interface CaughtUpOptions {
  /** The server's bearer token, if it has one. */
  token?: string;
  /** How long to wait for the recording queue, at most. @default 5000 */
  timeoutMs?: number;
}

/**
 * Wait until the server has recorded and indexed what it answered.
 *
 * @param url The server's URL.
 * @param options Token and bound.
 * @returns When done (never throws: what fails is left to the caller's
 *   next step, which says what is wrong).
 */
export async function serverCaughtUp(
  url: string,
  options: CaughtUpOptions = {},
): Promise<void> {
  const headers: Record<string, string> = options.token
    ? { authorization: `Bearer ${options.token}` }
    : {};
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  try {
    while (Date.now() < deadline) {
      const res = await fetch(`${url}/health`, { headers });
      if (!res.ok) {
        await res.body?.cancel();
        break;
      }
      const h = await res.json() as { model_gateway?: { queued?: number } };
      if (!(Number(h.model_gateway?.queued) > 0)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const res = await fetch(`${url}/captures`, { headers });
    await res.body?.cancel();
  } catch { /* unreachable or not permitted: the reading stays as it is */ }
}
