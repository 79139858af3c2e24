/**
 * Test helper: a private PostgreSQL 15 cluster in a temporary folder, on a
 * free loopback port, started and stopped by the test (no system service,
 * no password). Needs Debian's `postgresql` package (`.ci/run` installs
 * it); `initdb` refuses root, so the cluster runs as the `postgres` user.
 *
 * @module
 */

const BIN = "/usr/lib/postgresql/15/bin";

/** Whether the PostgreSQL binaries are installed. */
export function postgresAvailable(): boolean {
  try {
    Deno.statSync(`${BIN}/initdb`);
    return true;
  } catch {
    return false;
  }
}

/** A running private cluster. */
export interface Cluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** Stop it (`immediate`: as if it crashed). */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Start it again. */
  start(): Promise<void>;
  /** Stop it and remove its folder. */
  [Symbol.asyncDispose](): Promise<void>;
}

async function run(cmd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("runuser", {
    args: ["-u", "postgres", "--", cmd, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `${cmd} failed: ${new TextDecoder().decode(out.stderr).slice(0, 500)}`,
    );
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Create and start a cluster.
 *
 * @returns The cluster.
 */
export async function startCluster(): Promise<Cluster> {
  if (!postgresAvailable()) {
    throw new Error(
      "PostgreSQL 15 is not installed: apt-get install postgresql (the team-store tests need it)",
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "harness_pg_" });
  await new Deno.Command("chown", { args: ["postgres", dir] }).output();
  const data = `${dir}/data`;
  await run(`${BIN}/initdb`, ["-D", data, "-A", "trust", "-U", "postgres"]);
  const port = freePort();
  const start = () =>
    run(`${BIN}/pg_ctl`, [
      "-D",
      data,
      "-o",
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off`,
      "-l",
      `${dir}/log`,
      "-w",
      "start",
    ]);
  await start();
  const stop = (mode: "fast" | "immediate" = "fast") =>
    run(`${BIN}/pg_ctl`, ["-D", data, "-m", mode, "-w", "stop"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async [Symbol.asyncDispose]() {
      await stop("immediate").catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
