/**
 * The machine's load as the hook benchmark reads and adds it: the CPU this
 * process's reaped children used, the 1-minute load average, and busy
 * processes that load the machine on purpose (`--load K`).
 *
 * @module
 */

/**
 * CPU ms of this process's reaped children (user + system, 10 ms ticks).
 *
 * @returns Milliseconds of CPU, in 10 ms steps.
 */
export async function childrenCpuMs(): Promise<number> {
  const out = await new Deno.Command("cat", {
    args: [`/proc/${Deno.pid}/stat`],
  })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  // Fields after the command name in parentheses: cutime is the 16th field
  // of the line, cstime the 17th.
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) * 10;
}

/**
 * The 1-minute load average (`/proc/loadavg` needs more than a read grant).
 *
 * @returns The load average, or NaN when it cannot be read.
 */
export async function loadAverage(): Promise<number> {
  try {
    const out = await new Deno.Command("cat", { args: ["/proc/loadavg"] })
      .output();
    return Number(new TextDecoder().decode(out.stdout).split(" ")[0]);
  } catch {
    return NaN;
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
