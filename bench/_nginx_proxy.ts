/**
 * nginx as the gateway benchmark's reference proxy: a plain reverse proxy
 * (one worker, keep-alive connections to the upstream, buffering off so SSE
 * is relayed as it comes), its config written to a temp dir, bound to
 * 127.0.0.1 on a free port and run in the foreground as the current user.
 * Installed with `apt-get install -y nginx` when missing (benchmarks only,
 * as `.ci/run` installs what it needs); when it cannot be, the benchmark
 * says so and runs without it.
 *
 * @module
 */
import { join } from "node:path";

/** A running nginx. */
export interface NginxProxy {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** nginx's version line. */
  version: string;
  /** The master and worker processes. */
  pids(): Promise<number[]>;
  /** Stop it (SIGQUIT: graceful) and remove its temp dir. */
  stop(): Promise<null>;
}

async function run(
  cmd: string,
  args: string[],
): Promise<{ ok: boolean; text: string }> {
  try {
    const out = await new Deno.Command(cmd, {
      args,
      stdout: "piped",
      stderr: "piped",
      env: { DEBIAN_FRONTEND: "noninteractive" },
    }).output();
    const dec = new TextDecoder();
    return {
      ok: out.success,
      text: dec.decode(out.stdout) + dec.decode(out.stderr),
    };
  } catch (err) {
    return { ok: false, text: (err as Error).message };
  }
}

/**
 * The nginx binary, installed from Debian's package when missing.
 *
 * @returns Its path, or why there is none.
 */
export async function findNginx(): Promise<{ bin: string } | { why: string }> {
  for (const bin of ["/usr/sbin/nginx", "nginx"]) {
    if ((await run(bin, ["-v"])).ok) return { bin };
  }
  const update = await run("apt-get", ["update", "-qq"]);
  const install = update.ok
    ? await run("apt-get", ["install", "-y", "-qq", "nginx"])
    : update;
  if (install.ok && (await run("/usr/sbin/nginx", ["-v"])).ok) {
    return { bin: "/usr/sbin/nginx" };
  }
  return {
    why: `nginx is not installed and apt-get install -y nginx failed: ${
      install.text.trim().split("\n").at(-1) ?? ""
    }`,
  };
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** What the config says. */
interface NginxConfig {
  /** Its temp dir (pid, logs, temp paths). */
  dir: string;
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** The upstream's origin. */
  upstream: string;
  /** The current user (workers run as it; nginx ignores it unless root). */
  user: string;
}

function config(c: NginxConfig): string {
  const { dir, port } = c;
  const target = new URL(c.upstream);
  return `daemon off;
master_process on;
worker_processes 1;
${c.user ? `user ${c.user};\n` : ""}pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "error.log")} warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${join(dir, "body")};
  proxy_temp_path ${join(dir, "proxy")};
  fastcgi_temp_path ${join(dir, "fastcgi")};
  uwsgi_temp_path ${join(dir, "uwsgi")};
  scgi_temp_path ${join(dir, "scgi")};
  upstream model { server ${target.host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 64m;
    location / {
      proxy_pass http://model;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`;
}

/**
 * The children of a process (`/proc/<pid>/task/<pid>/children` through
 * `cat`: only -A may read /proc).
 */
async function childrenOf(pid: number): Promise<number[]> {
  const out = await run("cat", [`/proc/${pid}/task/${pid}/children`]);
  return out.ok ? out.text.trim().split(/\s+/).filter(Boolean).map(Number) : [];
}

/**
 * Start nginx in front of `upstream` and wait until it answers.
 *
 * @param bin The nginx binary.
 * @param upstream The upstream's origin (`http://127.0.0.1:<port>`).
 * @returns The running proxy.
 * @throws {Error} When it exits or does not come up within 10 s (its error
 *   log said).
 */
export async function startNginx(
  bin: string,
  upstream: string,
): Promise<NginxProxy> {
  const dir = await Deno.makeTempDir({ prefix: "harness_bench_nginx_" });
  const port = freePort();
  const conf = join(dir, "nginx.conf");
  const user = (await run("id", ["-un"])).text.trim();
  await Deno.writeTextFile(conf, config({ dir, port, upstream, user }));
  const version = (await run(bin, ["-v"])).text.trim();
  const child = new Deno.Command(bin, {
    args: ["-p", dir, "-c", conf, "-e", join(dir, "error.log")],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let exited = false;
  const status = child.status.then((st) => {
    exited = true;
    return st;
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      if ((await childrenOf(child.pid)).length > 0) break;
    } catch {
      // Not listening yet.
    }
    if (exited || Date.now() > until) {
      // TERM: the master stops its workers too (KILL would orphan them).
      const workers = exited ? [] : await childrenOf(child.pid);
      if (!exited) child.kill("SIGTERM");
      await status;
      for (const pid of workers) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // Gone with the master.
        }
      }
      const log = await Deno.readTextFile(join(dir, "error.log")).catch(
        () => "",
      );
      await Deno.remove(dir, { recursive: true });
      throw new Error(
        `nginx did not start on ${url} (${
          exited ? "it exited" : "not ready within 10 s"
        }): ${await stderr}${log}`.trim(),
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    version,
    pids: async () => [child.pid, ...await childrenOf(child.pid)],
    stop: async () => {
      child.kill("SIGQUIT");
      await status;
      await stderr;
      await Deno.remove(dir, { recursive: true });
      return null;
    },
  };
}
