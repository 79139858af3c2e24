/**
 * Record one real OpenCode session through `install opencode --gateway`,
 * offline, as the host_c fixtures were recorded: a scratch git project, a
 * real `ingest.ts serve` on a free loopback port forwarding the OpenAI
 * routes to the scripted Responses model (`_opencode_model.ts`), the
 * project's own installer with `--gateway`, a second plugin beside ours
 * that stores every plugin call (`{seq, hook, ts, t, input, output}`, as
 * `fixtures/hosts/host_c/*` hold them), and `opencode run --format json`
 * with a scratch `HOME`. The model's exchanges (the request as the gateway
 * forwarded it, the answer's events) are stored beside the plugin calls,
 * all numbered in the order they happened. What it writes and how it was
 * rewritten: `fixtures/hosts/host_c/gateway/RECORDING.md`. No test runs it.
 *
 * ```sh
 * deno run -A tests/installers/_opencode_record.ts --out fixtures/hosts/host_c/gateway/openai
 * ```
 *
 * (`HARNESS_OPENCODE_BIN` names the binary; else it comes from npm, as the
 * live test gets it.)
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  findOpencode,
  OPENCODE_VERSION,
  runOpencode,
  writeOpencodeProject,
} from "./_opencode.ts";
import { startOpencodeModel } from "./_opencode_model.ts";
import { waitFor } from "../_wait.ts";

const REPO = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const DEMO = "/home/dev/agent-demo";
/** The recording server's URL in the fixtures (a replay puts its own in). */
export const RECORDED_SERVER = "http://127.0.0.1:8848";
/** The capture the recording pinned. */
export const RECORDED_CAPTURE = "oc_gateway";

/** The recording plugin: every call stored byte for byte, in order. */
const RECORDER =
  `// Stores every plugin call as {seq, hook, ts, t, input, output}.
import { writeFileSync } from "node:fs";
let seq = 0;
function keep(hook, input, output) {
  const dir = process.env.DUMP_DIR;
  if (!dir) return;
  seq++;
  const t = performance.timeOrigin + performance.now();
  const rec = { seq, hook, ts: new Date().toISOString(), t, input: input ?? null, output: output ?? null };
  writeFileSync(dir + "/" + t.toFixed(3).padStart(20, "0") + "-" + String(seq).padStart(4, "0") + ".json",
    JSON.stringify(rec, (k, v) => (typeof v === "bigint" ? String(v) : v), 2));
}
export const RecordPlugin = async (ctx) => {
  keep("plugin.init", { directory: ctx?.directory, worktree: ctx?.worktree }, null);
  const hooks = {};
  for (const name of ["config", "event"]) hooks[name] = async (input) => keep(name, input, null);
  for (const name of ["chat.message", "chat.params", "chat.headers", "tool.execute.before", "tool.execute.after", "permission.ask", "shell.env"]) {
    hooks[name] = async (input, output) => keep(name, input, output);
  }
  hooks.dispose = async () => keep("dispose", null, null);
  return hooks;
};
`;

/** One stored plugin call. */
type Recorded = {
  t: number;
  hook: string;
  input: Record<string, unknown> | null;
  output: unknown;
};

/** Bus events no plugin of ours reads, left out of the fixture (size). */
const NOISE = new Set([
  "plugin.added",
  "catalog.updated",
  "reference.updated",
  "integration.updated",
  "message.part.delta",
]);

function keepRecord(rec: Recorded): boolean {
  const ev = rec.input?.event as { type?: string } | undefined;
  return !(rec.hook === "event" && NOISE.has(ev?.type ?? ""));
}

/**
 * `chat.params` and `chat.headers` carry the provider's whole model
 * catalog (~140 KB each): only the model used is kept.
 */
function trim(rec: Recorded): Recorded {
  const input = rec.input;
  const provider = input?.provider as
    | { models?: Record<string, unknown> }
    | undefined;
  const model = (input?.model as { id?: string } | undefined)?.id;
  if (provider?.models && model) {
    provider.models = model in provider.models
      ? { [model]: provider.models[model] }
      : {};
  }
  return rec;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function deno(args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(
      `deno ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return text;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string" } },
  });
  if (!values.out) throw new Error("--out DIR is required");
  const out = values.out;
  const found = await findOpencode();
  if (found.bin === null) throw new Error(found.why);
  const scratch = await Deno.makeTempDir({ prefix: "oc_record_" });
  const project = join(scratch, "work/gateway");
  const home = join(scratch, "home/gateway");
  const dump = join(scratch, "dump");
  const root = join(scratch, "store");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(dump, { recursive: true });
  await writeOpencodeProject(project);
  await using model = startOpencodeModel(project);
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const serve = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${REPO}/ingest.ts`,
      "serve",
      "--port",
      String(port),
      "--root",
      root,
      "--upstream-openai",
      model.url,
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    await waitFor("the server to answer /health", async () => {
      try {
        const res = await fetch(`${url}/health`);
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false; // not up yet
      }
    }, { everyMs: 50 });
    const installed = await deno([
      "run",
      "-A",
      `${REPO}/ingest.ts`,
      "install",
      "opencode",
      "--project",
      project,
      "--url",
      url,
      "--gateway",
      "--capture",
      RECORDED_CAPTURE,
    ]);
    await Deno.writeTextFile(
      join(project, ".opencode/plugin/zz_record.js"),
      RECORDER,
    );
    const run = await runOpencode({
      bin: found.bin,
      project,
      home,
      env: { DUMP_DIR: dump },
    });
    if (run.code !== 0) throw new Error(`opencode run: ${run.stderr}`);
    const inspect = await deno([
      "run",
      "-A",
      `${REPO}/ingest.ts`,
      "capture",
      "inspect",
      RECORDED_CAPTURE,
      "--json",
      "--root",
      root,
    ]).catch((err) => `inspect failed: ${(err as Error).message}`);
    // Everything in the order it happened: plugin calls and model exchanges.
    type Item = { t: number; name: string; text: string };
    const items: Item[] = [];
    for (const e of Deno.readDirSync(dump)) {
      const text = await Deno.readTextFile(join(dump, e.name));
      const rec = JSON.parse(text) as Recorded;
      if (!keepRecord(rec)) continue;
      items.push({ t: rec.t, name: rec.hook, text: JSON.stringify(trim(rec)) });
    }
    for (const x of model.exchanges) {
      items.push({
        t: x.t,
        name: "model.exchange",
        text: JSON.stringify({ hook: "model.exchange", ...x }, null, 2),
      });
    }
    items.sort((a, b) => a.t - b.t);
    const rewrite = (text: string) => {
      let s = text.replaceAll(`${REPO}/`, `${DEMO}/harness/`)
        .replaceAll(scratch, DEMO)
        .replaceAll(url, RECORDED_SERVER);
      const h = Deno.env.get("HOME");
      if (h && h !== "/") s = s.replaceAll(`${h}/`, "/home/dev/");
      return s;
    };
    await Deno.mkdir(out, { recursive: true });
    for (const e of Deno.readDirSync(out)) {
      if (e.name.endsWith(".json") || e.name.endsWith(".jsonl")) {
        await Deno.remove(join(out, e.name));
      }
    }
    let n = 0;
    for (const it of items) {
      n++;
      const body = JSON.parse(it.text);
      body.seq = n;
      await Deno.writeTextFile(
        join(out, `${String(n).padStart(3, "0")}-${it.name}.json`),
        rewrite(JSON.stringify(body, null, 2)) + "\n",
      );
    }
    await Deno.writeTextFile(
      join(out, "_run.jsonl"),
      rewrite(run.lines.map((l) => JSON.stringify(l)).join("\n")) + "\n",
    );
    await Deno.writeTextFile(
      join(out, "_recording.json"),
      rewrite(JSON.stringify(
        {
          opencode: OPENCODE_VERSION,
          deno: Deno.version.deno,
          recorded_at: new Date().toISOString(),
          session: run.session,
          host_tokens: run.tokens,
          model_requests: model.exchanges.length,
          install: installed.trim().split("\n"),
          inspect: (() => {
            try {
              return JSON.parse(inspect);
            } catch {
              return inspect;
            }
          })(),
        },
        null,
        2,
      )) + "\n",
    );
    console.log(
      `recorded session ${run.session}: ${n} files, host tokens ${run.tokens.input}/${run.tokens.output} over ${run.tokens.steps} steps, ${model.exchanges.length} model requests`,
    );
  } finally {
    serve.kill("SIGTERM");
    await serve.stderr.cancel();
    await serve.status;
    await Deno.remove(scratch, { recursive: true });
  }
}

if (import.meta.main) await main();
