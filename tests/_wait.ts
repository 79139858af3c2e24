/**
 * Test helper: wait for a condition, not for a fixed time. A test that
 * sleeps "long enough" fails on a busy machine and wastes time on an idle
 * one; {@link waitFor} returns as soon as the condition holds, and
 * {@link hangGuard} and {@link guarded} turn a child process that never
 * ends, or an answer that never comes, into a failed test instead of a
 * hung one. These are the only timers
 * `tests/test_timing_test.ts` lets a test use without a named reason.
 *
 * @module
 */

/** How long a guard waits before it takes a wait for a hang (60 s). */
export const HANG_MS = 60_000;

/** How {@link waitFor} polls. */
export interface WaitOptions {
  /**
   * Give up after this long (default 60 s). A guard against a hang, not a
   * timing claim: it is far above what the wait takes on a busy machine.
   */
  limitMs?: number;
  /** Between two looks at the condition (default 10 ms). */
  everyMs?: number;
}

/**
 * Poll `condition` until it returns a truthy value, and return that value.
 *
 * @param what What is waited for, named in the error at the limit.
 * @param condition Looked at at once, then every `everyMs`.
 * @param options The limit and the pace.
 * @returns The condition's first truthy value.
 * @throws {Error} When `limitMs` passes first, naming `what`.
 */
export async function waitFor<T>(
  what: string,
  condition: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<NonNullable<T>> {
  const limitMs = options.limitMs ?? HANG_MS;
  const everyMs = options.everyMs ?? 10;
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      throw new Error(`gave up after ${limitMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Kill `child` (SIGKILL) if it is still running after `limitMs`: a guard
 * against a hang, not a timing claim. A test awaits the child as usual and
 * sees the kill in its exit status (`signal: "SIGKILL"`, code 137).
 *
 * @param child The process to guard.
 * @param limitMs When to give up on it (default {@link HANG_MS}).
 * @returns Disposing it (`using`) clears the guard.
 */
export function hangGuard(
  child: Deno.ChildProcess,
  limitMs: number = HANG_MS,
): Disposable {
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* exited meanwhile */ }
  }, limitMs);
  return { [Symbol.dispose]: () => clearTimeout(timer) };
}

/**
 * Await `promise`, or fail after `limitMs` naming `what`: a guard against
 * a hang (an answer that never comes), not a timing claim.
 *
 * @param what What is awaited, named in the error at the limit.
 * @param promise What is awaited.
 * @param limitMs When to give up (default {@link HANG_MS}).
 * @returns What `promise` settles with.
 * @throws {Error} When `limitMs` passes first, naming `what`; or what
 * `promise` rejects with.
 */
export async function guarded<T>(
  what: string,
  promise: Promise<T>,
  limitMs: number = HANG_MS,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`gave up after ${limitMs} ms waiting for ${what}`)),
      limitMs,
    );
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}
