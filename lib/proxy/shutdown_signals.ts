/**
 * {@linkcode onShutdownSignals}: the signals a host (or a terminal) sends a
 * stdio server to stop it, wired to one stop function.
 *
 * @module
 */

/**
 * Call `stop` on SIGTERM, SIGINT or SIGHUP (SIGINT only on Windows) until
 * disposed, instead of dying at once: a stdio server stopped this way
 * stops its children and releases its store like when its stdin closes.
 *
 * @param stop What to do on the first such signal.
 * @returns A disposable that removes the listeners.
 *
 * @example
 * ```ts ignore
 * const stop = new AbortController();
 * using _signals = onShutdownSignals(() => stop.abort());
 * ```
 */
export function onShutdownSignals(stop: () => void): Disposable {
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGTERM", "SIGINT", "SIGHUP"];
  for (const s of signals) Deno.addSignalListener(s, stop);
  return {
    [Symbol.dispose]() {
      for (const s of signals) Deno.removeSignalListener(s, stop);
    },
  };
}
