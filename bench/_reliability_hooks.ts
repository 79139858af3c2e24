/**
 * Hooks fail open, timed (a row of `deno task bench reliability`): the Deno
 * forwarder (`ingest.ts hook`) and the installed hook client (curl, from
 * `lib/installers/hook_command.ts`) against a server that is down
 * (connection refused), one that accepts and never answers, and, with that
 * silent server, a stdin the host never closes. Each must exit 0 with the
 * host's answer: the refused connection at once (well before its 5 s
 * time-out), the others within their 300 ms time-out (the forwarder's
 * open stdin: one for stdin, one for the post) and the process's
 * start-up. `tests/forwarder/` checks what each exits with and prints;
 * how long it takes is measured here, not in a test.
 *
 * @module
 */
import { join } from "node:path";
import {
  HOOK_CLIENT_PATH,
  hookCommand,
} from "../lib/installers/hook_command.ts";
import { silentServer } from "../tests/_helpers.ts";
import type { BenchRow } from "./_table.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const INGEST = join(ROOT, "ingest.ts");
const ENV = [
  "HARNESS_INGEST_URL",
  "HARNESS_CAPTURE_ID",
  "HARNESS_HOOK_TIMEOUT",
  "HARNESS_INGEST_TOKEN",
];
const B_PAYLOAD = Deno.readTextFileSync(
  join(ROOT, "fixtures/hosts/host_b/basic/002-BeforeAgent.json"),
);

/** A loopback port nothing listens on. */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** One hook call as a host makes it (`sh -c`, the payload on stdin). */
async function hookCall(
  command: string,
  env: Record<string, string>,
  keepStdinOpen: boolean,
): Promise<{ ms: number; ok: boolean }> {
  const t0 = performance.now();
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", command],
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(B_PAYLOAD)).catch(() => {});
  if (!keepStdinOpen) await w.close().catch(() => {});
  const guard = setTimeout(() => child.kill(), 60_000);
  const out = await child.output();
  clearTimeout(guard);
  const ms = performance.now() - t0;
  if (keepStdinOpen) await w.close().catch(() => {});
  return {
    ms,
    ok: out.code === 0 &&
      new TextDecoder().decode(out.stdout).trim() === "{}",
  };
}

/** The command of each route: the forwarder itself and the hook client. */
function commands(url: string): [string, string][] {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  return [
    [
      "forwarder",
      [
        q(Deno.execPath()),
        "run --quiet --allow-net=127.0.0.1",
        `--allow-env=${ENV.join(",")}`,
        q(INGEST),
        "hook host_b",
      ].join(" "),
    ],
    [
      "hook client",
      hookCommand({
        client: join(ROOT, HOOK_CLIENT_PATH),
        launcher: Deno.execPath(),
        module: INGEST,
        host: "host_b",
        url,
        defaultUrl: "http://127.0.0.1:8848",
        env: ENV,
        answer: "{}",
      }),
    ],
  ];
}

/**
 * Time the fail-open cases, `rounds` calls each, and make the row.
 *
 * @param rounds Calls per route and case (the slowest is reported).
 * @returns The reliability table's row.
 */
export async function hookFailOpenRow(rounds = 5): Promise<BenchRow> {
  await using silent = silentServer();
  const cases: {
    name: string;
    url: string;
    timeout: string;
    open: boolean;
    limit: number;
  }[] = [
    {
      name: "down",
      url: `http://127.0.0.1:${closedPort()}`,
      timeout: "5000",
      open: false,
      limit: 1_000,
    },
    {
      name: "silent",
      url: `http://127.0.0.1:${silent.port}`,
      timeout: "300",
      open: false,
      limit: 1_500,
    },
    {
      name: "stdin open",
      url: `http://127.0.0.1:${silent.port}`,
      timeout: "300",
      open: true,
      limit: 2_000,
    },
  ];
  const parts: string[] = [];
  let met = true;
  for (const c of cases) {
    for (const [route, command] of commands(c.url)) {
      let slowest = 0;
      for (let i = 0; i < rounds; i++) {
        const r = await hookCall(command, {
          HARNESS_INGEST_URL: c.url,
          HARNESS_HOOK_TIMEOUT: c.timeout,
        }, c.open);
        slowest = Math.max(slowest, r.ms);
        met &&= r.ok;
      }
      met &&= slowest < c.limit;
      parts.push(`${c.name} ${route} ${slowest.toFixed(0)}`);
    }
  }
  return {
    name:
      `a hook with the server down (time-out 5 s), silent (300 ms), stdin never closed (300 ms): forwarder and hook client, slowest of ${rounds}`,
    value: `${parts.join(", ")} ms, each exit 0 with {}`,
    target: "down < 1 s, silent < 1.5 s, stdin open < 2 s",
    met: met ? "yes" : "NO",
  };
}
