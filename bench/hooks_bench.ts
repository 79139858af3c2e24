/**
 * Hook cost (`deno task bench hooks [--n N] [--load K]`): what one hook call
 * costs the host. It installs the hooks with the real installer into a temp
 * project, then spawns each *installed* command the way the hosts (Node
 * apps) do (a shell, `/bin/sh -c`, the recorded payload on stdin, the
 * host's project variables in the environment) against `ingest.ts serve`
 * running on 127.0.0.1 in its own process, and times each call from spawn
 * to exit. A no-op command (`true`) is measured through the same shell in
 * the same rounds: the added cost is the difference. Claude Code's `http`
 * hooks are timed as the host sends them (a keep-alive POST of the same
 * JSON; no process, so the whole answer time is the added cost).
 *
 * Beside what is installed, the candidates a fast path was chosen from,
 * each on the same host_b payloads: the Deno forwarder alone (what every
 * command hook ran before), curl inline (the client without its `sh`
 * script), a `node` one-liner, and bash's `/dev/tcp` (no connect time-out
 * and bash only: a floor, not a candidate). Calls are interleaved round by
 * round so that load from elsewhere falls on all of them alike; `--load K`
 * adds K busy processes (a loaded machine). Every route posts into its own
 * capture and the bench fails when one recorded nothing. Tables go to
 * stdout and `bench/out/hooks.md`.
 *
 * @module
 */
import { join } from "node:path";
import { type BenchRow, printTable } from "./_table.ts";
import { readyLine } from "./_ready_line.ts";
import { serveArgs } from "./_serve_args.ts";
import {
  HOST_A_TRANSCRIPT_EVENTS,
  isHarnessEntry,
} from "../lib/installers/hook_settings.ts";
import {
  HOOK_CLIENT_PATH,
  hookCommand,
} from "../lib/installers/hook_command.ts";
import { FORWARDER_ENV } from "../lib/cli/cmd_hook.ts";
import { commandParts } from "../lib/cli/cmd_doctor.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const INGEST = join(ROOT, "ingest.ts");
const HOSTS = join(ROOT, "fixtures", "hosts");
const OUT = new URL("./out/", import.meta.url).pathname;

/** Target of issue 36: added p50 per command hook on an idle machine. */
const TARGET_ADDED_P50_MS = 15;

/** One route a hook call can take. */
interface Route {
  /** Row label. */
  name: string;
  /** The shell command, or null for an http hook. */
  command: string | null;
  /** Payloads to cycle through. */
  payloads: string[];
  /** The http hook's URL. */
  url?: string;
  /** Host project variables. */
  env: Record<string, string>;
  /** The capture it records into (null: the floor). */
  capture: string | null;
  /** Installed (what users get) or a candidate. */
  kind: "floor" | "installed" | "candidate";
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

/** Payloads of a scenario whose event has a harness hook in the settings. */
function payloads(
  host: string,
  scenario: string,
  keep: (event: string) => boolean,
): string[] {
  const dir = join(HOSTS, host, scenario);
  return [...Deno.readDirSync(dir)].map((e) => e.name)
    .filter((n) => n.endsWith(".json")).sort()
    .filter((n) => keep(n.replace(/^\d+-|\.json$/g, "")))
    .map((n) => Deno.readTextFileSync(join(dir, n)));
}

async function startServer(
  root: string,
): Promise<{ url: string; child: Deno.ChildProcess }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: serveArgs(root, { store: join(root, "store") }),
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const { match } = await readyLine(
    child.stdout,
    /on (http:\/\/127\.0\.0\.1:\d+)/,
    { exited: "ingest.ts serve exited" },
  );
  return { url: match[1], child };
}

/** Install a host's hooks with the real installer; the settings written. */
async function install(
  project: string,
  args: string[],
): Promise<Record<string, { hooks: Record<string, unknown>[] }[]>> {
  const { main } = await import("../ingest.ts");
  const code = await main(["install", ...args, "--project", project], {
    out: () => {},
    err: () => {}, // the npx-cache warning: it applies to users, not here
  });
  if (code !== 0) throw new Error(`install ${args.join(" ")} failed`);
  const file = args[0] === "host_a" ? ".claude" : ".gemini";
  return JSON.parse(
    Deno.readTextFileSync(join(project, file, "settings.json")),
  ).hooks;
}

/** The harness entry installed for an event. */
function entryOf(
  hooks: Record<string, { hooks: Record<string, unknown>[] }[]>,
  host: string,
  event: string,
): Record<string, unknown> {
  const e = (hooks[event] ?? []).flatMap((g) => g.hooks)
    .find((h) => isHarnessEntry(h, host));
  if (!e) throw new Error(`no ${host} hook installed for ${event}`);
  return e;
}

/** One call: spawn to exit (or the http answer), in ms. */
async function call(route: Route, payload: string): Promise<number> {
  const t0 = performance.now();
  if (route.command === null) {
    const res = await fetch(route.url!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: payload,
    });
    await res.arrayBuffer();
    return performance.now() - t0;
  }
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", route.command],
    env: route.env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  // `true` does not read its stdin: the host ignores that, so do we.
  await w.write(new TextEncoder().encode(payload)).catch(() => {});
  await w.close().catch(() => {});
  await child.output();
  return performance.now() - t0;
}

async function eventCount(url: string, capture: string): Promise<number> {
  const res = await fetch(`${url}/capture/${capture}/summary`);
  const body = await res.json();
  return body.capture?.event_count ?? 0;
}

/**
 * Bash alone: stdin read with `read` (one byte per system call on a pipe
 * or socket), the request written to `/dev/tcp`. A connect to a server
 * whose accept queue is full hangs: no time-out short of the host's.
 */
function bashTcp(port: string, capture: string): string {
  return `bash -c 'IFS= read -r -d "" -t 0.3 b; LC_ALL=C; exec 3<>/dev/tcp/127.0.0.1/${port} && printf "POST /hook/host_b?cap=${capture} HTTP/1.1\\r\\nhost: 127.0.0.1:${port}\\r\\nconnection: close\\r\\ncontent-type: application/json\\r\\ncontent-length: %d\\r\\n\\r\\n%s" "\${#b}" "$b" >&3 && IFS= read -r -t 0.3 l <&3; printf "{}\\n"' 2>/dev/null || printf '{}\\n'`;
}

/** The candidate commands, on host_b payloads, each into its own capture. */
function candidates(url: string, launcher: string): Record<string, string> {
  const port = new URL(url).port;
  const parts = {
    launcher,
    module: INGEST,
    host: "host_b",
    url,
    defaultUrl: "http://127.0.0.1:8848",
    env: [...FORWARDER_ENV],
    answer: "{}",
  };
  const target = (cap: string) => `${url}/hook/host_b?cap=${cap}`;
  return {
    "Deno forwarder (before)": hookCommand({ ...parts, capture: "c_deno" }),
    "curl inline (no sh script)":
      `curl -q -s -o /dev/null -m 0.3 --noproxy '*' -X POST -T - -H 'Expect:' -H 'content-type: application/json' '${
        target("c_curl")
      }'; printf '{}\\n'`,
    "node one-liner":
      `node -e 'const b=[];process.stdin.on("data",(d)=>b.push(d)).on("end",()=>{const r=require("http").request("${
        target("c_node")
      }",{method:"POST",headers:{"content-type":"application/json"},timeout:300},(s)=>{s.resume();s.on("end",()=>console.log("{}"))});r.on("error",()=>console.log("{}"));r.on("timeout",()=>r.destroy());r.end(Buffer.concat(b))})' 2>/dev/null || printf '{}\\n'`,
    "bash /dev/tcp (floor; no connect time-out)": bashTcp(port, "c_bash"),
    "timeout + bash /dev/tcp": `timeout 0.3 ${
      bashTcp(port, "c_tbash").replace(/ 2>\/dev\/null.*$/, "")
    } 2>/dev/null || printf '{}\\n'`,
  };
}

/** CPU ms of this process's reaped children (user + system, 10 ms ticks). */
async function childrenCpuMs(): Promise<number> {
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

/** The 1-minute load average (`/proc/loadavg` needs more than a read grant). */
async function loadAverage(): Promise<number> {
  try {
    const out = await new Deno.Command("cat", { args: ["/proc/loadavg"] })
      .output();
    return Number(new TextDecoder().decode(out.stdout).split(" ")[0]);
  } catch {
    return NaN;
  }
}

function busy(k: number): Deno.ChildProcess[] {
  return Array.from({ length: k }, () =>
    new Deno.Command("/bin/sh", {
      args: ["-c", "while :; do :; done"],
      stdout: "null",
      stderr: "null",
    }).spawn());
}

/**
 * Run the hook benchmark.
 *
 * @param args `--n N` calls per route (default 60), `--load K` busy processes (default 0).
 */
export async function hooksBench(args: string[] = []): Promise<void> {
  const flag = (name: string, d: number) => {
    const at = args.indexOf(name);
    return at >= 0 ? Number(args[at + 1]) : d;
  };
  const n = flag("--n", 60);
  const load = flag("--load", 0);
  const root = await Deno.makeTempDir({ prefix: "harness_hooks_bench_" });
  const server = await startServer(root);
  const loaders: Deno.ChildProcess[] = [];
  try {
    const project = join(root, "project");
    Deno.mkdirSync(project);
    const a = await install(project, [
      "host_a",
      "--url",
      server.url,
      "--capture",
      "i_a_http",
    ]);
    const aCommand = join(root, "project_a_command");
    Deno.mkdirSync(aCommand);
    const ac = await install(aCommand, [
      "host_a",
      "--command",
      "--url",
      server.url,
      "--capture",
      "i_a_cmd",
    ]);
    const b = await install(project, [
      "host_b",
      "--url",
      server.url,
      "--capture",
      "i_b",
    ]);
    const aEnv = { CLAUDE_PROJECT_DIR: project };
    const bEnv = {
      GEMINI_PROJECT_DIR: project,
      CLAUDE_PROJECT_DIR: project,
      GEMINI_CWD: project,
    };
    const bPayloads = payloads("host_b", "basic", (e) => !!b[e]);
    // Stop reads the transcript: point it at a copy here.
    const transcriptDir = join(HOSTS, "host_a", "basic", "_transcripts");
    const transcript = join(root, "transcript.jsonl");
    Deno.copyFileSync(
      join(transcriptDir, [...Deno.readDirSync(transcriptDir)][0].name),
      transcript,
    );
    const stop = JSON.parse(
      payloads("host_a", "basic", (e) => e === "Stop")[0],
    );
    stop.transcript_path = transcript;
    // SessionEnd reads the same transcript, what came after the last read
    // (here, after the first call, nothing): it never waits.
    const end = JSON.parse(
      payloads("host_a", "basic", (e) => e === "SessionEnd")[0],
    );
    end.transcript_path = transcript;
    const aCommandPayloads = payloads(
      "host_a",
      "basic",
      (e) => !!ac[e] && !HOST_A_TRANSCRIPT_EVENTS.has(e),
    );
    const { launcher } = commandParts(
      String(entryOf(b, "host_b", "BeforeTool").command),
    );
    const routes: Route[] = [
      {
        name: "true (the floor)",
        command: "true",
        payloads: bPayloads,
        env: bEnv,
        capture: null,
        kind: "floor",
      },
      {
        name: "host_b command hook (hook client)",
        command: String(entryOf(b, "host_b", "BeforeTool").command),
        payloads: bPayloads,
        env: bEnv,
        capture: "i_b",
        kind: "installed",
      },
      {
        name: "host_a command hook (hook client; --command or a token)",
        command: String(entryOf(ac, "host_a", "PreToolUse").command),
        payloads: aCommandPayloads,
        env: aEnv,
        capture: "i_a_cmd",
        kind: "installed",
      },
      {
        name: "host_a Stop (Deno forwarder, reads the transcript)",
        command: String(entryOf(a, "host_a", "Stop").command),
        payloads: [JSON.stringify(stop)],
        env: aEnv,
        capture: "i_a_http",
        kind: "installed",
      },
      {
        name: "host_a SessionEnd (Deno forwarder, reads the transcript)",
        command: String(entryOf(a, "host_a", "SessionEnd").command),
        payloads: [JSON.stringify(end)],
        env: aEnv,
        capture: "i_a_http",
        kind: "installed",
      },
      {
        name: "host_a http hook (keep-alive POST, no process)",
        command: null,
        url: String(entryOf(a, "host_a", "PreToolUse").url),
        payloads: aCommandPayloads,
        env: {},
        capture: "i_a_http",
        kind: "installed",
      },
      ...Object.entries(candidates(server.url, launcher)).map((
        [name, command],
      ) => ({
        name,
        command,
        payloads: bPayloads,
        env: bEnv,
        capture: /cap=(c_\w+)/.exec(command)?.[1] ?? "c_deno",
        kind: "candidate" as const,
      })),
    ];
    if (!Deno.statSync(join(ROOT, HOOK_CLIENT_PATH)).isFile) {
      throw new Error(`${HOOK_CLIENT_PATH} is missing`);
    }
    // Warm up (Deno's module cache, curl's libraries, the server's JIT).
    for (const r of routes) {
      for (let i = 0; i < 3; i++) {
        await call(r, r.payloads[i % r.payloads.length]);
      }
    }
    loaders.push(...busy(load));
    const loadavg = await loadAverage();
    const times = new Map<Route, number[]>(routes.map((r) => [r, []]));
    for (let i = 0; i < n; i++) {
      // Rotate the order round by round.
      for (let k = 0; k < routes.length; k++) {
        const r = routes[(i + k) % routes.length];
        times.get(r)!.push(await call(r, r.payloads[i % r.payloads.length]));
      }
    }
    // CPU of the hook's processes (load-independent), route by route.
    const cpu = new Map<Route, number>();
    for (const r of routes) {
      if (r.command === null) continue;
      const before = await childrenCpuMs();
      for (let i = 0; i < n; i++) {
        await call(r, r.payloads[i % r.payloads.length]);
      }
      cpu.set(r, ((await childrenCpuMs()) - before) / n);
    }
    for (const c of loaders) c.kill("SIGKILL");
    await Promise.all(loaders.map((c) => c.status));
    loaders.length = 0;
    const floor = times.get(routes[0])!;
    const floorCpu = cpu.get(routes[0]) ?? 0;
    const rows: BenchRow[] = [];
    const md: string[] = [];
    for (const r of routes) {
      const xs = times.get(r)!;
      const p50 = percentile(xs, 0.5);
      const p99 = percentile(xs, 0.99);
      const process = r.command !== null;
      // Added: each call less the floor's call of the same round.
      const added = process ? xs.map((x, i) => x - floor[i]) : xs;
      const added50 = percentile(added, 0.5);
      const added99 = percentile(added, 0.99);
      const cpuMs = cpu.get(r);
      const cpuText = cpuMs === undefined
        ? "-"
        : r.kind === "floor"
        ? cpuMs.toFixed(1)
        : `${cpuMs.toFixed(1)} (+${(cpuMs - floorCpu).toFixed(1)})`;
      if (r.capture && await eventCount(server.url, r.capture) === 0) {
        throw new Error(`${r.name}: nothing recorded into ${r.capture}`);
      }
      const fast = r.kind === "installed" && process &&
        !r.name.includes("Deno forwarder");
      rows.push({
        name: `${r.kind === "candidate" ? "candidate: " : ""}${r.name}`,
        value: `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms` +
          (r.kind === "floor"
            ? ""
            : `; added p50 ${added50.toFixed(1)}, p99 ${
              added99.toFixed(1)
            } ms`) +
          `; CPU ${cpuText} ms`,
        target: fast ? `added p50 <= ${TARGET_ADDED_P50_MS} ms` : undefined,
        met: fast ? (added50 <= TARGET_ADDED_P50_MS ? "yes" : "no") : undefined,
      });
      md.push(
        `| ${r.kind} | ${r.name} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | ${
          r.kind === "floor" ? "-" : added50.toFixed(1)
        } | ${r.kind === "floor" ? "-" : added99.toFixed(1)} | ${cpuText} | ${
          fast ? (added50 <= TARGET_ADDED_P50_MS ? "yes" : "no") : "-"
        } |`,
      );
    }
    const title =
      `Hook cost per call (${n} calls per route, ${load} busy processes, load average ${
        loadavg.toFixed(2)
      } at start)`;
    printTable(title, rows);
    const text = [
      "# Hook cost (`deno task bench hooks`)",
      "",
      `deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores; ${
        new Date().toISOString().slice(0, 10)
      }; ${n} calls per route, ${load} busy processes, load average ${
        loadavg.toFixed(2)
      } at start`,
      "",
      "Each installed hook command spawned as the hosts do (`/bin/sh -c`, the recorded payload on stdin, the host's project variables), against `ingest.ts serve` on 127.0.0.1, timed from spawn to exit; `true` through the same shell in the same rounds is the floor, and added = each call less the floor's call of the same round (http hooks: no process, the whole answer time is added). CPU: user + system time of the hook's processes per call (this process's reaped children, `/proc/<pid>/stat`, 10 ms ticks over all calls of a route, run route by route after the timed rounds), which does not depend on the load from elsewhere; added = less the floor's. Routes interleaved round by round. Candidates post host_b payloads. Target (issue 36): added p50 <= 15 ms per command hook on an idle machine.",
      "",
      "| kind | route | p50 ms | p99 ms | added p50 ms | added p99 ms | CPU ms per call (added) | added p50 <= 15 ms |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
      ...md,
      "",
      "Installed: command hooks run the hook client (`lib/forwarder/hook_client.sh`: curl), host_a's transcript events the Deno forwarder, host_a's other events native http hooks. Not chosen: the `node` one-liner (dearer than Deno), bash's `/dev/tcp` (cheapest, but no connect time-out without `timeout`, and `read` takes stdin a byte per system call: a 260 KB payload took ~270 ms, so a large tool result would miss a 300 ms deadline).",
      "",
    ].join("\n");
    Deno.mkdirSync(OUT, { recursive: true });
    const suffix = load ? `_load${load}` : "";
    await Deno.writeTextFile(join(OUT, `hooks${suffix}.md`), text);
  } finally {
    for (const c of loaders) c.kill("SIGKILL");
    server.child.kill("SIGTERM");
    await server.child.status;
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await hooksBench(Deno.args);
