/**
 * {@linkcode ThreadCpu}: the CPU time of other processes to the nanosecond,
 * summed over their threads (`/proc/<pid>/task/<tid>/schedstat`), for the
 * CPU per request of a cell whose rounds use a few hundred milliseconds of
 * it (`/proc/<pid>/stat` counts 10 ms ticks).
 *
 * @module
 */

/**
 * CPU seconds of processes, thread by thread. A thread's time is kept at its
 * last reading after it ends, so a reading never goes down (an ended thread
 * loses only what it ran after that reading: threads a runtime ends are
 * ones that sat idle first).
 */
export class ThreadCpu {
  /** Nanoseconds on CPU by process, then thread, as last read. */
  readonly #seen = new Map<number, Map<number, number>>();

  /**
   * CPU seconds of some processes together.
   *
   * @param pids The processes.
   * @returns Their threads' CPU seconds, ended threads included.
   */
  async seconds(pids: number[]): Promise<number> {
    let ns = 0;
    for (const pid of pids) {
      const threads = this.#seen.get(pid) ?? new Map<number, number>();
      this.#seen.set(pid, threads);
      for (const [tid, t] of await readThreads(pid)) threads.set(tid, t);
      for (const t of threads.values()) ns += t;
    }
    return ns / 1e9;
  }
}

/**
 * Each live thread's nanoseconds on CPU (`grep` reads every schedstat file
 * at once; only -A may read another process's /proc).
 */
async function readThreads(pid: number): Promise<Map<number, number>> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `grep -H . /proc/${pid}/task/*/schedstat 2>/dev/null`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const threads = new Map<number, number>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /\/task\/(\d+)\/schedstat:(\d+)/.exec(line);
    if (m) threads.set(Number(m[1]), Number(m[2]));
  }
  return threads;
}
