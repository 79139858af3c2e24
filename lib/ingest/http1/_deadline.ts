/**
 * {@linkcode within}: wait for a promise, but not longer than a deadline
 * (the listener's bound on a handler's run time).
 *
 * @module
 */

/**
 * What `work` resolves to, or `null` when `ms` pass first. The work itself
 * is not stopped: it runs on, and whoever holds it may still wait for it.
 *
 * @param work The promise.
 * @param ms How long to wait, in milliseconds.
 * @returns Its value, or `null` past the deadline.
 * @throws Whatever `work` rejects with before the deadline.
 */
export async function within<T>(
  work: Promise<T>,
  ms: number,
): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
