/**
 * The routes a hook call can take in the hook benchmark: the hooks the real
 * installer writes (host_b's command hook, host_a's command hook, host_a's
 * transcript events through the Deno forwarder, host_a's http hook), the
 * `true` floor, and the candidates a fast path was chosen from; and one
 * call along a route, timed as the host makes it.
 *
 * @module
 */
import { join } from "node:path";
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

/** One route a hook call can take. */
export interface Route {
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

/**
 * One call: spawn to exit (or the http answer), in ms.
 *
 * @param route The route.
 * @param payload The hook payload sent on stdin (or POSTed).
 * @returns Milliseconds from spawn to exit.
 */
export async function callRoute(
  route: Route,
  payload: string,
): Promise<number> {
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

/**
 * Install the hooks into projects under `root` and list every route: the
 * floor first, then what is installed, then the candidates.
 *
 * @param root A temp folder for the projects and the transcript copy.
 * @param url The ingest server's base URL.
 * @returns The routes.
 * @throws {Error} When an install fails, a hook is missing or the hook
 *   client is not in the checkout.
 */
export async function hookRoutes(root: string, url: string): Promise<Route[]> {
  const project = join(root, "project");
  Deno.mkdirSync(project);
  const a = await install(project, [
    "host_a",
    "--url",
    url,
    "--capture",
    "i_a_http",
  ]);
  const aCommand = join(root, "project_a_command");
  Deno.mkdirSync(aCommand);
  const ac = await install(aCommand, [
    "host_a",
    "--command",
    "--url",
    url,
    "--capture",
    "i_a_cmd",
  ]);
  // install claude-code --gateway: the turn ends are http hooks.
  const aGateway = join(root, "project_a_gateway");
  Deno.mkdirSync(aGateway);
  const ag = await install(aGateway, [
    "host_a",
    "--gateway",
    "--url",
    url,
    "--capture",
    "i_a_gw",
  ]);
  const b = await install(project, [
    "host_b",
    "--url",
    url,
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
  // SessionEnd reads the same transcript, what came after the last read
  // (here, after the first call, nothing): it never waits.
  const transcriptRoute = (event: "Stop" | "SessionEnd"): Route => {
    const payload = JSON.parse(
      payloads("host_a", "basic", (e) => e === event)[0],
    );
    payload.transcript_path = transcript;
    return {
      name: `host_a ${event} (Deno forwarder, reads the transcript)`,
      command: String(entryOf(a, "host_a", event).command),
      payloads: [JSON.stringify(payload)],
      env: aEnv,
      capture: "i_a_http",
      kind: "installed",
    };
  };
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
    transcriptRoute("Stop"),
    transcriptRoute("SessionEnd"),
    ...(["Stop", "SessionEnd"] as const).map((event): Route => {
      const e = entryOf(ag, "host_a", event);
      if (e.type !== "http") {
        throw new Error(`--gateway ${event} is no http hook`);
      }
      return {
        name: `host_a ${event} with --gateway (http hook, no transcript)`,
        command: null,
        url: String(e.url),
        payloads: payloads("host_a", "basic", (x) => x === event),
        env: {},
        capture: "i_a_gw",
        kind: "installed",
      };
    }),
    {
      name: "host_a http hook (keep-alive POST, no process)",
      command: null,
      url: String(entryOf(a, "host_a", "PreToolUse").url),
      payloads: aCommandPayloads,
      env: {},
      capture: "i_a_http",
      kind: "installed",
    },
    ...Object.entries(candidates(url, launcher)).map((
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
  return routes;
}
