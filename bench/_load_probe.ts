/**
 * The machine's load as the benchmarks read and add it: the CPU this
 * process's reaped children used, the load averages, the whole machine's
 * busy CPU time, and busy processes that load the machine on purpose.
 *
 * @module
 */

/** A `/proc` file's text (`/proc` needs more than a read grant: `cat`). */
async function readProc(path: string): Promise<string> {
  const out = await new Deno.Command("cat", { args: [path] }).output();
  return new TextDecoder().decode(out.stdout);
}

/**
 * CPU ms of this process's reaped children (user + system, 10 ms ticks).
 *
 * @returns Milliseconds of CPU, in 10 ms steps.
 */
export async function childrenCpuMs(): Promise<number> {
  const text = await readProc(`/proc/${Deno.pid}/stat`);
  // Fields after the command name in parentheses: cutime is the 16th field
  // of the line, cstime the 17th.
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) * 10;
}

/**
 * The 1-minute load average.
 *
 * @returns The load average, or NaN when it cannot be read.
 */
export async function loadAverage(): Promise<number> {
  try {
    return Number((await readProc("/proc/loadavg")).split(" ")[0]);
  } catch {
    return NaN;
  }
}

/**
 * The load averages over 1, 5 and 15 minutes.
 *
 * @returns The three figures as `/proc/loadavg` writes them, or "?".
 */
export async function loadAverages(): Promise<string> {
  try {
    return (await readProc("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  } catch {
    return "?";
  }
}

/**
 * Busy CPU seconds of the whole machine since boot (`/proc/stat`).
 *
 * @returns The seconds, or null when they cannot be read.
 */
export async function machineBusySeconds(): Promise<number | null> {
  try {
    const f = (await readProc("/proc/stat")).split("\n")[0].trim()
      .split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / 100;
  } catch {
    return null;
  }
}

/**
 * Start `k` processes that spin until killed (SIGKILL them when done).
 *
 * @param k How many.
 * @returns The processes.
 */
export function busy(k: number): Deno.ChildProcess[] {
  return Array.from({ length: k }, () =>
    new Deno.Command("/bin/sh", {
      args: ["-c", "while :; do :; done"],
      stdout: "null",
      stderr: "null",
    }).spawn());
}
