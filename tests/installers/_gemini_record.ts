/**
 * Record one real Gemini CLI session through `install gemini-cli
 * --gateway`, offline, as the host_b fixtures were recorded: a scratch git
 * project and home (`_gemini_cli.ts`), a real `ingest.ts serve` on a free
 * loopback port, the scripted Gemini-API model (`_gemini_cli_model.ts`),
 * the project's own installer (`install gemini-cli --project … --url …
 * --gateway --capture gm_gateway`, with the scratch `HOME`: it writes
 * `.gemini/.env` and the hooks), a second command hook after ours on every
 * installed event that stores each payload byte for byte, and `gemini -p
 * … --yolo`. The model's exchanges (the request as the model received it,
 * the key left out, and the answer's bytes) are stored beside the hook
 * payloads, all numbered in the order they happened. What it writes and
 * how it was rewritten: `fixtures/hosts/host_b/gateway/RECORDING.md`. No
 * test runs it.
 *
 * ```sh
 * deno run -A tests/installers/_gemini_record.ts --out fixtures/hosts/host_b/gateway
 * ```
 *
 * With `--relay` (before the server had the Gemini routes) the install's
 * URL is a relay in this script that sends `/hook/…` to the server and
 * every other path to the model; without it, the server itself, started
 * with `--upstream-gemini` (the gateway).
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  findGeminiCli,
  GEMINI_CLI_VERSION,
  runGeminiCli,
  writeGeminiProject,
} from "./_gemini_cli.ts";
import { startGatewaySessionModel } from "./_gemini_cli_model.ts";
import { waitFor } from "../_wait.ts";

const REPO = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const DEMO = "/home/dev/agent-demo";
/** The recording server's URL in the fixtures (a replay puts its own in). */
export const RECORDED_SERVER = "http://127.0.0.1:8848";
/** The capture the recording pinned. */
export const RECORDED_CAPTURE = "gm_gateway";
/** The prompt of the session. */
export const RECORDED_PROMPT = "Read notes.txt, then say hi from the shell.";

/** The recording hook: every payload stored as `{t, event, payload}`. */
const RECORDER =
  `// Stores one hook payload as {t, event, payload} (payload: the bytes as text).
import { writeFileSync } from "node:fs";
const [dir, event] = process.argv.slice(2);
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const t = performance.timeOrigin + performance.now();
  const payload = Buffer.concat(chunks).toString("utf8");
  writeFileSync(dir + "/" + t.toFixed(3).padStart(20, "0") + ".json", JSON.stringify({ t, event, payload }));
  process.stdout.write("{}");
  process.exit(0);
});
`;

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function deno(
  args: string[],
  env?: Record<string, string>,
): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  if (!out.success) {
    throw new Error(`deno ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  }
  return dec.decode(out.stdout) + dec.decode(out.stderr);
}

/** A relay: `/hook/…`, `/health`, `/captures…` to the server, the rest to the model. */
function startRelay(server: string, model: string): Deno.HttpServer {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const u = new URL(req.url);
      const to = /^\/(hook|health|captures)/.test(u.pathname) ? server : model;
      const headers = new Headers(req.headers);
      headers.delete("host");
      const res = await fetch(`${to}${u.pathname}${u.search}`, {
        method: req.method,
        headers,
        body: req.body,
      });
      return new Response(res.body, {
        status: res.status,
        headers: res.headers,
      });
    },
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string" }, relay: { type: "boolean" } },
  });
  if (!values.out) throw new Error("--out DIR is required");
  const out = values.out;
  const found = await findGeminiCli();
  if (found.js === null) throw new Error(found.why);
  const scratch = await Deno.makeTempDir({ prefix: "gm_record_" });
  const project = join(scratch, "work/gateway");
  const home = join(scratch, "home/gateway");
  const dump = join(scratch, "dump");
  const root = join(scratch, "store");
  await Deno.mkdir(dump, { recursive: true });
  await writeGeminiProject({ project, home });
  await Deno.writeTextFile(join(scratch, "record_hook.mjs"), RECORDER);
  const model = startGatewaySessionModel();
  const port = freePort();
  const server = `http://127.0.0.1:${port}`;
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
      ...(values.relay ? [] : ["--upstream-gemini", model.url]),
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const relay = values.relay ? startRelay(server, model.url) : null;
  const url = relay
    ? `http://127.0.0.1:${(relay.addr as Deno.NetAddr).port}`
    : server;
  try {
    await waitFor("the server's /health", async () => {
      try {
        const res = await fetch(`${server}/health`);
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false; // not up yet
      }
    }, { limitMs: 20_000, everyMs: 50 });
    const installed = await deno([
      "run",
      "-A",
      `${REPO}/ingest.ts`,
      "install",
      "gemini-cli",
      "--project",
      project,
      "--url",
      url,
      "--gateway",
      "--capture",
      RECORDED_CAPTURE,
    ], { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" });
    // The recording hook after ours, on every event install put in.
    const file = join(project, ".gemini/settings.json");
    const settings = JSON.parse(await Deno.readTextFile(file));
    for (const [event, groups] of Object.entries(settings.hooks)) {
      (groups as unknown[]).push({
        hooks: [{
          type: "command",
          command: `node ${scratch}/record_hook.mjs ${dump} ${event}`,
          name: "zz_record",
          timeout: 10000,
        }],
      });
    }
    await Deno.writeTextFile(file, JSON.stringify(settings, null, 2) + "\n");
    const run = await runGeminiCli({
      js: found.js,
      project,
      home,
      prompt: RECORDED_PROMPT,
    });
    if (run.code !== 0) {
      throw new Error(`gemini exited ${run.code}: ${run.stderr}`);
    }
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
    type Item = { t: number; name: string; text: string };
    const items: Item[] = [];
    for (const e of Deno.readDirSync(dump)) {
      const rec = JSON.parse(await Deno.readTextFile(join(dump, e.name))) as {
        t: number;
        event: string;
        payload: string;
      };
      items.push({ t: rec.t, name: rec.event, text: rec.payload });
    }
    const dec = new TextDecoder();
    model.requests.forEach((r, i) => {
      const { ["x-goog-api-key"]: _key, host: _host, ...headers } = r.headers;
      items.push({
        t: r.t,
        name: "model.exchange",
        text: JSON.stringify(
          {
            request: {
              method: r.method,
              path: r.path,
              query: r.query,
              headers,
              body: r.body,
            },
            answer: {
              content_type: r.api === "streamGenerateContent"
                ? "text/event-stream"
                : "application/json; charset=UTF-8",
              body: dec.decode(model.answers[i]),
            },
          },
          null,
          2,
        ),
      });
    });
    items.sort((a, b) => a.t - b.t);
    const rewrite = (text: string) => {
      let s = text.replaceAll(`${REPO}/`, `${DEMO}/harness/`)
        .replaceAll(scratch, DEMO)
        .replaceAll(url, RECORDED_SERVER)
        .replaceAll(server, RECORDED_SERVER);
      const h = Deno.env.get("HOME");
      if (h && h !== "/") s = s.replaceAll(`${h}/`, "/home/dev/");
      return s;
    };
    await Deno.mkdir(out, { recursive: true });
    for (const e of Deno.readDirSync(out)) {
      if (e.name.endsWith(".json")) await Deno.remove(join(out, e.name));
    }
    let n = 0;
    for (const it of items) {
      n++;
      await Deno.writeTextFile(
        join(out, `${String(n).padStart(3, "0")}-${it.name}.json`),
        rewrite(it.text) + (it.text.endsWith("\n") ? "" : "\n"),
      );
    }
    const usage = model.requests.map((_, i) => {
      const text = dec.decode(model.answers[i]);
      const last = text.trim().split(/\r?\n\r?\n/).pop()!.replace(
        /^data: /,
        "",
      );
      return (JSON.parse(last) as { usageMetadata?: unknown }).usageMetadata;
    });
    const sessions = items.filter((i) => i.name === "SessionStart").map((i) =>
      (JSON.parse(i.text) as { session_id: string }).session_id
    );
    await Deno.writeTextFile(
      join(out, "_recording.json"),
      rewrite(JSON.stringify(
        {
          gemini_cli: GEMINI_CLI_VERSION,
          deno: Deno.version.deno,
          recorded_at: new Date().toISOString(),
          through: relay
            ? "relay (hooks to the server, model calls to the model)"
            : "the server's model gateway",
          session: sessions[0] ?? null,
          prompt: RECORDED_PROMPT,
          stdout: run.stdout,
          model_requests: model.requests.map((r, i) => ({
            path: r.path,
            usage: usage[i],
          })),
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
      `recorded session ${
        sessions[0]
      }: ${n} files, ${model.requests.length} model requests`,
    );
  } finally {
    serve.kill("SIGTERM");
    await serve.stderr.cancel();
    await serve.status;
    await relay?.shutdown();
    await model.close();
    await Deno.remove(scratch, { recursive: true });
  }
}

if (import.meta.main) await main();
