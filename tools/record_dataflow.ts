/**
 * Record the lab's `dataflow` scenario with real Claude Code, one session
 * per variant (`tools/_dataflow_variants.ts`), as the shared fixtures were
 * recorded: a scratch git working folder per variant, a real
 * `ingest.ts serve` on a free loopback port, the project's own installer
 * (`ingest.ts install claude-code`) in the folder plus a command hook that
 * stores every payload byte for byte beside ours, and Claude Code run
 * headless (`claude -p … --output-format stream-json`) against the
 * scripted model (`tools/_dataflow_model.ts`) with a scratch `HOME`.
 * Machine paths are rewritten to `/home/dev/agent-demo/...` in what it
 * writes. How to run it and what it writes:
 * `fixtures/hosts/host_a/dataflow/RECORDING.md`. No test runs it.
 *
 * ```sh
 * npm install --prefix /tmp/cc @anthropic-ai/claude-code@2.1.328
 * deno run -A tools/record_dataflow.ts --claude /tmp/cc/node_modules/.bin/claude \
 *   --out fixtures/hosts/host_a/dataflow [--only 1,8] [--transcripts 1]
 * ```
 *
 * `--only` records some variants (by number, from 1); `--transcripts`
 * names the variants whose transcript and `stream-json` output are kept
 * (default 1: a transcript is ~170 KB).
 *
 * @module
 */
import { DATAFLOW_PROMPT, startDataflowModel } from "./_dataflow_model.ts";
import {
  DATAFLOW_VARIANTS,
  type DataflowVariant,
  variantFiles,
} from "./_dataflow_variants.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const DEMO = "/home/dev/agent-demo";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function run(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Deno.CommandOutput> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd: options.cwd,
    env: options.env,
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
  return out;
}

/** A real ingest server as a child process. */
async function startServe(root: string): Promise<
  { url: string; [Symbol.asyncDispose](): Promise<void> }
> {
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
      root,
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`${url}/health`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.stderr.cancel();
      await child.status;
    },
  };
}

/** Put the byte-for-byte recording hook beside every hook installed. */
async function addRecorder(ws: string, dir: string): Promise<void> {
  const file = `${ws}/.claude/settings.json`;
  const s = JSON.parse(await Deno.readTextFile(file));
  const command = `cat > '${dir}'/$(date +%s%N)-$$.json`;
  for (const [event, groups] of Object.entries(s.hooks)) {
    const matcher = (groups as { matcher?: string }[])[0]?.matcher;
    s.hooks[event].push({
      ...(matcher === undefined ? {} : { matcher }),
      hooks: [{ type: "command", command, timeout: 10 }],
    });
  }
  await Deno.writeTextFile(file, JSON.stringify(s, null, 2) + "\n");
}

/**
 * Machine paths → the fixtures' `/home/dev/...`: the scratch folder (and
 * its slug in the host's project folder names) to `/home/dev/agent-demo`,
 * this checkout to `/home/dev/agent-demo/harness`, the recording user's
 * home to `/home/dev`.
 */
function rewriter(scratch: string): (text: string) => string {
  const slug = (p: string) => p.replace(/[^a-zA-Z0-9]/g, "-");
  const home = Deno.env.get("HOME");
  return (text) => {
    // The checkout first: its path may be part of a rewritten one.
    let out = text.replaceAll(`${REPO}/`, `${DEMO}/harness/`)
      .replaceAll(scratch, DEMO)
      .replaceAll(slug(scratch), slug(DEMO));
    if (home && home !== "/") out = out.replaceAll(`${home}/`, "/home/dev/");
    return out;
  };
}

/** Copy the session's transcript (paths rewritten) into `dest/_transcripts`. */
async function keepTranscript(options: {
  home: string;
  session: string;
  dest: string;
  rewrite: (text: string) => string;
}): Promise<void> {
  const { home, session, dest, rewrite } = options;
  await Deno.mkdir(`${dest}/_transcripts`, { recursive: true });
  for (const e of Deno.readDirSync(`${home}/.claude/projects`)) {
    const t = `${home}/.claude/projects/${e.name}/${session}.jsonl`;
    try {
      await Deno.writeTextFile(
        `${dest}/_transcripts/${session}.jsonl`,
        rewrite(await Deno.readTextFile(t)),
      );
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}

async function recordVariant(options: {
  v: DataflowVariant;
  k: number;
  scratch: string;
  serverUrl: string;
  modelUrl: string;
  claude: string;
  out: string;
  transcript: boolean;
}): Promise<string> {
  const { v, k, scratch, out } = options;
  const name = `v${k}`;
  const ws = `${scratch}/work/dataflow-${k}`;
  const home = `${scratch}/home/dataflow`;
  const raw = `${scratch}/raw/${name}`;
  for (const d of [ws, home, raw]) await Deno.mkdir(d, { recursive: true });
  const files = variantFiles(v);
  for (const [p, text] of Object.entries(files)) {
    await Deno.mkdir(`${ws}/${p}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(`${ws}/${p}`, text);
  }
  await run("git", ["init", "-q", "-b", "master"], { cwd: ws });
  await run(Deno.execPath(), [
    "run",
    "-A",
    `${REPO}/ingest.ts`,
    "install",
    "claude-code",
    "--project",
    ws,
    "--url",
    options.serverUrl,
  ]);
  await addRecorder(ws, raw);
  const started = Date.now();
  const cc = await new Deno.Command(options.claude, {
    args: [
      "-p",
      DATAFLOW_PROMPT,
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
      ANTHROPIC_BASE_URL: options.modelUrl,
      ANTHROPIC_API_KEY: "sk-ant-dummy-recording-key",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = Date.now() - started;
  const rewrite = rewriter(scratch);
  const dest = `${out}/${name}`;
  await Deno.mkdir(dest, { recursive: true });
  if (!cc.success) {
    throw new Error(
      `claude exited ${cc.code} in ${ws}: ${
        new TextDecoder().decode(cc.stderr)
      }`,
    );
  }
  const names = [...Deno.readDirSync(raw)].map((e) => e.name).sort();
  let session = "";
  for (const [i, f] of names.entries()) {
    const text = await Deno.readTextFile(`${raw}/${f}`);
    const p = JSON.parse(text);
    session = p.session_id;
    const n = String(i + 1).padStart(3, "0");
    await Deno.writeTextFile(
      `${dest}/${n}-${p.hook_event_name}.json`,
      rewrite(text),
    );
  }
  if (options.transcript) {
    await keepTranscript({ home, session, dest, rewrite });
    await Deno.writeTextFile(
      `${dest}/_stream.jsonl`,
      rewrite(new TextDecoder().decode(cc.stdout)),
    );
  }
  await Deno.writeTextFile(
    `${dest}/_workspace.json`,
    JSON.stringify(
      {
        cwd: rewrite(ws),
        files,
        report: {
          path: `reports/${v.order}.txt`,
          content: await Deno.readTextFile(`${ws}/reports/${v.order}.txt`),
        },
      },
      null,
      2,
    ) + "\n",
  );
  return `${name}: ${v.order} ${names.length} payloads, session ${session}, ${ms} ms`;
}

/** Record every variant; print one line each and the server's captures. */
async function main(args: string[]): Promise<void> {
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const flags = {
    claude: flag("claude"),
    out: flag("out"),
    only: flag("only"),
    transcripts: flag("transcripts") ?? "1",
  };
  const transcripts = flags.transcripts.split(",").map(Number);
  const claude = flags.claude ?? "claude";
  const out = flags.out ?? "fixtures/hosts/host_a/dataflow";
  const scratch = await Deno.makeTempDir({ prefix: "dfrec" });
  await using model = startDataflowModel();
  await using serve = await startServe(`${scratch}/root`);
  const only = flags.only?.split(",").map(Number);
  try {
    for (const [i, v] of DATAFLOW_VARIANTS.entries()) {
      if (only && !only.includes(i + 1)) continue;
      console.log(
        await recordVariant({
          v,
          k: i + 1,
          scratch,
          serverUrl: serve.url,
          modelUrl: model.url,
          claude,
          out,
          transcript: transcripts.includes(i + 1),
        }),
      );
    }
  } finally {
    await Deno.writeTextFile(
      `${scratch}/model_requests.json`,
      JSON.stringify(model.requests, null, 1),
    );
    console.log(`scratch (model requests, raw payloads, store): ${scratch}`);
  }
  const caps = await (await fetch(`${serve.url}/captures`)).json();
  console.log(`server captures: ${JSON.stringify(caps)}`);
}

if (import.meta.main) await main(Deno.args);
