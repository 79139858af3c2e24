/**
 * Portkey's AI gateway (npm `@portkey-ai/gateway`, Node + Hono) as a peer
 * arm of the gateway benchmark: a gateway in the field's standard shape that
 * records nothing. Installed by the bench from npm into a temp folder,
 * pinned: a fresh install resolves hono 4.13 / @hono/node-server 1.19, with
 * which every streaming request fails with 500 `TypeError: immutable`, so
 * `hono` 4.9.7 and `@hono/node-server` 1.13.5 are pinned with npm
 * `overrides`, as its own lockfile does. Run headless on 127.0.0.1; the
 * client names the upstream per request (`x-portkey-provider: openai`,
 * `x-portkey-custom-host`). When it cannot be installed or started (no
 * `node`/`npm`, no registry), the arm is skipped with the reason.
 *
 * @module
 */
import { join } from "node:path";
import { readyLine } from "./_ready_line.ts";

/** The version measured. */
export const PORTKEY_VERSION = "1.15.2";

const PACKAGE = {
  name: "harness-bench-portkey",
  private: true,
  dependencies: { "@portkey-ai/gateway": PORTKEY_VERSION },
  overrides: { hono: "4.9.7", "@hono/node-server": "1.13.5" },
};

/** A started Portkey gateway. */
export interface Portkey {
  /** Its base URL. */
  url: string;
  /** Headers every client request carries (which upstream). */
  headers: Record<string, string>;
  /** Its process. */
  pids: () => Promise<number[]>;
  /** Stop it. */
  stop: () => Promise<null>;
  /** What ran (versions). */
  note: string;
}

async function run(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n")
      .slice(-3).join(" ");
    throw new Error(`${cmd} ${args.join(" ")} failed: ${err}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

/**
 * Install Portkey's gateway (once per machine: kept in the temp folder).
 *
 * @returns Its entry script.
 */
async function install(): Promise<string> {
  const dir = join(
    Deno.env.get("TMPDIR") ?? "/tmp",
    `harness_bench_portkey_${PORTKEY_VERSION}`,
  );
  const entry = join(
    dir,
    "node_modules/@portkey-ai/gateway/build/start-server.js",
  );
  try {
    await Deno.stat(entry);
    return entry;
  } catch {
    // Not installed yet.
  }
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "package.json"),
    JSON.stringify(PACKAGE, null, 2),
  );
  await run("npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--ignore-scripts",
    "--loglevel=error",
  ], dir);
  return entry;
}

/** A free port on 127.0.0.1 (Portkey takes its port from the command line). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Install and start Portkey's gateway in front of `upstream`.
 *
 * @param upstream The upstream's origin (OpenAI wire under `/v1`).
 * @returns The started gateway, or why it could not run.
 */
export async function startPortkey(
  upstream: string,
): Promise<Portkey | { why: string }> {
  let entry: string;
  try {
    entry = await install();
  } catch (err) {
    return { why: `could not install from npm: ${(err as Error).message}` };
  }
  let node: string;
  try {
    node = await run("node", ["--version"], Deno.cwd());
  } catch (err) {
    return { why: `no node: ${(err as Error).message}` };
  }
  const port = freePort();
  const child = new Deno.Command("node", {
    args: [entry, `--port=${port}`, "--headless"],
    env: { NODE_ENV: "production" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    await readyLine(child.stdout, /Ready for connections/);
  } catch (err) {
    child.kill("SIGKILL");
    await child.status;
    return { why: `did not start: ${(err as Error).message}` };
  }
  // Its per-request log lines would fill the pipe: read and drop them.
  child.stderr.pipeTo(new WritableStream()).catch(() => {});
  return {
    url: `http://127.0.0.1:${port}`,
    headers: {
      "x-portkey-provider": "openai",
      "x-portkey-custom-host": `${upstream}/v1`,
    },
    pids: () => Promise.resolve([child.pid]),
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      return null;
    },
    note:
      `@portkey-ai/gateway ${PORTKEY_VERSION} (hono 4.9.7, @hono/node-server 1.13.5 pinned) on Node ${node}, headless`,
  };
}
