/**
 * A gateway started in its own process (`_gateway_child.ts`): its URL,
 * pid, resident memory, and a hard stop.
 *
 * @module
 */
import type { ModelGatewayOptions } from "../../lib/model_gateway/mod.ts";

const CHILD = new URL("./_gateway_child.ts", import.meta.url).pathname;

/** A gateway process. */
export interface SpawnedGateway {
  /** Its base URL. */
  url: string;
  /** Its pid. */
  pid: number;
  /** Its resident memory now (MB, `VmRSS`). */
  rssMb(): Promise<number>;
  /** Stop it with SIGKILL and wait for it to end. */
  kill(): Promise<void>;
  /** Stop it gently (stdin closed) and wait for it to end. */
  stop(): Promise<void>;
}

/**
 * Start a gateway process over a store.
 *
 * @param root The store's root.
 * @param options The model gateway's options (JSON).
 * @returns The process.
 */
export async function spawnGateway(
  root: string,
  options: ModelGatewayOptions,
): Promise<SpawnedGateway> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--v8-flags=--initial-old-space-size=64",
      "--allow-read",
      "--allow-write",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-sys=hostname",
      CHILD,
      root,
      JSON.stringify(options),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let url = "";
  while (!url) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the gateway process ended: ${text}`);
    text += value;
    url = /gateway (http:\/\/\S+)/.exec(text)?.[1] ?? "";
  }
  // The rest of its output is not needed.
  const drained = (async () => {
    while (!(await lines.read()).done) { /* nothing */ }
  })();
  return {
    url,
    pid: child.pid,
    async rssMb() {
      // Through cat: only --allow-all may read /proc itself.
      const out = await new Deno.Command("cat", {
        args: [`/proc/${child.pid}/status`],
      }).output();
      const status = new TextDecoder().decode(out.stdout);
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    },
    async kill() {
      child.kill("SIGKILL");
      await child.status;
      await child.stdin.close().catch(() => {});
      await drained;
    },
    async stop() {
      await child.stdin.close();
      await child.status;
      await drained;
    },
  };
}
