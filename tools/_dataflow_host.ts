/**
 * The real Claude Code of the lab's `dataflow` scenario, through the model
 * gateway: a real `ingest.ts serve` child process whose Anthropic upstream
 * is the scenario's scripted model (`_dataflow_model.ts`), a scratch
 * working folder per session holding a variant's files
 * (`_dataflow_variants.ts`) with the project's own installer in it
 * (`ingest.ts install claude-code --gateway`: hooks and
 * `ANTHROPIC_BASE_URL`), and Claude Code run headless (`claude -p …`) with a
 * scratch `HOME`, offline. Used by `tools/serve_dataflow.ts` (the figures
 * in `docs/gateway.md`) and by the test that serves the compiled package
 * back to Claude Code (`tests/forms/serve_tree_claude_code_test.ts`).
 *
 * Claude Code is found as `HARNESS_CLAUDE_CODE` names it (a path to its
 * `claude`), else `/tmp/cc/node_modules/.bin/claude` (where
 * `fixtures/hosts/host_a/dataflow/RECORDING.md` installs it), else not.
 *
 * @module
 */
import { DATAFLOW_PROMPT } from "./_dataflow_model.ts";
import { type DataflowVariant, variantFiles } from "./_dataflow_variants.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** The Claude Code version the scenario was recorded with. */
export const CLAUDE_CODE_VERSION = "2.1.328";

/**
 * Where Claude Code is on this machine, or null.
 *
 * @returns The path of its `claude` executable.
 */
export function findClaudeCode(): string | null {
  let named: string | undefined;
  try {
    named = Deno.env.get("HARNESS_CLAUDE_CODE");
  } catch { /* no env permission: look in the default place */ }
  for (const p of [named, "/tmp/cc/node_modules/.bin/claude"]) {
    if (!p) continue;
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch { /* not there */ }
  }
  return null;
}

/** Where this Deno keeps its module cache (`DENO_DIR`, else the platform's default). */
function denoDir(): string {
  const env = (k: string) => {
    try {
      return Deno.env.get(k);
    } catch {
      return undefined;
    }
  };
  return env("DENO_DIR") ??
    `${env("XDG_CACHE_HOME") ?? `${env("HOME") ?? "/root"}/.cache`}/deno`;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A running `ingest.ts serve` child process. */
export interface ServeProcess {
  /** Its base URL. */
  url: string;
  /** What it wrote to stderr so far (read when it exits). */
  stderr(): Promise<string>;
  /** Its exit status, when it exited by itself (a refused start). */
  exited: Promise<Deno.CommandStatus>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Start `ingest.ts serve` on a free loopback port and wait for `/health`
 * (or for it to exit: a refused package).
 *
 * @param options The store root, the Anthropic upstream, more arguments.
 * @returns The server.
 */
export async function startServe(options: {
  root: string;
  upstream: string;
  args?: string[];
}): Promise<ServeProcess> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${REPO}/ingest.ts`,
      "serve",
      "--port",
      String(port),
      "--root",
      options.root,
      "--upstream-anthropic",
      options.upstream,
      ...(options.args ?? []),
    ],
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const chunks: Uint8Array[] = [];
  const reading = (async () => {
    for await (const c of child.stderr) chunks.push(c);
  })();
  const text = async () => {
    await reading;
    return new TextDecoder().decode(
      chunks.reduce((a, c) => {
        const out = new Uint8Array(a.length + c.length);
        out.set(a);
        out.set(c, a.length);
        return out;
      }, new Uint8Array()),
    );
  };
  let done = false;
  const exited = child.status.then((s) => {
    done = true;
    return s;
  });
  const url = `http://127.0.0.1:${port}`;
  while (!done) {
    try {
      const res = await fetch(`${url}/health`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not yet */ }
    await Promise.race([
      exited,
      new Promise((r) => setTimeout(r, 50)),
    ]);
  }
  return {
    url,
    stderr: text,
    exited,
    async [Symbol.asyncDispose]() {
      if (!done) child.kill("SIGTERM");
      await exited;
      await reading;
    },
  };
}

/** One Claude Code session's result. */
export interface SessionRun {
  /** Claude Code's exit code. */
  code: number;
  /** Its `stream-json` output. */
  stdout: string;
  /** Its standard error. */
  stderr: string;
  /** The working folder. */
  cwd: string;
  /** The report it wrote (`reports/<order>.txt`), or null. */
  report: string | null;
  /** Milliseconds the session took. */
  ms: number;
  /** Claude Code's session id (the episode's id), from its output. */
  session: string | null;
}

async function run(cmd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `"${cmd} ${args.join(" ")}" failed (${out.code}): ${
        new TextDecoder().decode(out.stderr)
      }`,
    );
  }
}

/**
 * Run one session of the scenario (or of another prompt) in a new working
 * folder holding a variant's files, with the project's installer put in
 * (`install claude-code --gateway --url SERVER`), Claude Code's base URL
 * `baseUrl` (the server's, or its `/p/NAME` route).
 *
 * @param options Claude Code, the scratch folder, the folder's name, the
 *   variant, the server, the base URL, the prompt.
 * @returns What the session did.
 */
export async function runSession(options: {
  claude: string;
  scratch: string;
  name: string;
  variant: DataflowVariant;
  server: string;
  baseUrl?: string;
  prompt?: string;
}): Promise<SessionRun> {
  const { scratch, name, variant } = options;
  const ws = `${scratch}/work/${name}`;
  const home = `${scratch}/home/${name}`;
  for (const d of [ws, home]) await Deno.mkdir(d, { recursive: true });
  for (const [p, text] of Object.entries(variantFiles(variant))) {
    await Deno.mkdir(`${ws}/${p}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(`${ws}/${p}`, text);
  }
  await run("git", ["-C", ws, "init", "-q", "-b", "master"]);
  await run(Deno.execPath(), [
    "run",
    "-A",
    `${REPO}/ingest.ts`,
    "install",
    "claude-code",
    "--project",
    ws,
    "--url",
    options.server,
    "--gateway",
  ]);
  const baseUrl = options.baseUrl ?? options.server;
  if (baseUrl !== options.server) {
    // Another route of the same server (`/p/NAME`): the settings' base URL.
    const file = `${ws}/.claude/settings.json`;
    const s = JSON.parse(await Deno.readTextFile(file));
    s.env = { ...s.env, ANTHROPIC_BASE_URL: baseUrl };
    await Deno.writeTextFile(file, JSON.stringify(s, null, 2) + "\n");
  }
  const started = Date.now();
  const cc = await new Deno.Command(options.claude, {
    args: [
      "-p",
      options.prompt ?? DATAFLOW_PROMPT,
      "--output-format",
      "stream-json",
      "--verbose",
      "--allowedTools",
      "Bash,Read,Write",
    ],
    cwd: ws,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      ANTHROPIC_API_KEY: "sk-ant-dummy-recording-key",
      // The same base URL the settings give: offline, Claude Code 2.1.328
      // spends ~17 s at start when its base URL comes from the project's
      // settings alone (measured: 18.8 s against 0.8 s for "hi").
      ANTHROPIC_BASE_URL: baseUrl,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      // The hooks' Deno keeps its module cache where this one does (the
      // scratch HOME would start it cold: seconds per hook).
      DENO_DIR: denoDir(),
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = Date.now() - started;
  let report: string | null = null;
  try {
    report = await Deno.readTextFile(`${ws}/reports/${variant.order}.txt`);
  } catch { /* none written */ }
  const stdout = new TextDecoder().decode(cc.stdout);
  return {
    code: cc.code,
    stdout,
    stderr: new TextDecoder().decode(cc.stderr),
    cwd: ws,
    report,
    ms,
    session: /"session_id":"([^"]+)"/.exec(stdout)?.[1] ?? null,
  };
}

/**
 * The report the scenario's policy writes for a variant (what the scripted
 * model writes; `_workspace.json` of the recorded sessions holds the same).
 *
 * @param v The variant.
 * @returns The report's text.
 */
export function expectedReport(v: DataflowVariant): string {
  const status = Number(v.balance) >= Number(v.amount)
    ? "covered"
    : "insufficient";
  return `order ${v.order}\ncustomer ${v.customer}\namount ${v.amount} ${v.currency}\nbalance ${v.balance}\nstatus: ${status}\n`;
}
