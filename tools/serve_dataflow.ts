/**
 * Measure a compiled package served back to a real Claude Code: the lab's
 * `dataflow` scenario (`_dataflow_host.ts`), variants 1–7 recorded through
 * the model gateway (`install claude-code --gateway`), compiled with
 * `compile.ts`'s defaults, then each held-out variant (8, 9) run twice:
 * through the plain gateway and through `serve --package dataflow=…` at
 * `/p/dataflow`; and a session of another task through the same route.
 * Prints, per session, Claude Code's exit code, whether the report is the
 * expected one byte for byte, the upstream model calls, and what the
 * gateway's `/health` counted. The figures of `docs/gateway.md` ("Serving
 * a compiled package") come from this script. No test runs it (the test is
 * `tests/forms/serve_tree_claude_code_test.ts`).
 *
 * ```sh
 * npm install --prefix /tmp/cc @anthropic-ai/claude-code@2.1.328
 * deno run -A tools/serve_dataflow.ts [--claude PATH] [--form auto|agent|tree]
 * ```
 *
 * @module
 */
import { startDataflowModel } from "./_dataflow_model.ts";
import { DATAFLOW_VARIANTS } from "./_dataflow_variants.ts";
import {
  expectedReport,
  findClaudeCode,
  runSession,
  type SessionRun,
  startServe,
} from "./_dataflow_host.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** Another task in the same kind of folder (not the scenario's). */
export const OTHER_PROMPT =
  "Count the lines of ledger.csv with wc -l and tell me the number.";

async function ingest(root: string, args: string[]): Promise<string> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${REPO}/ingest.ts`, ...args, "--root", root],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(r.stdout) +
    new TextDecoder().decode(r.stderr);
  if (!r.success) throw new Error(`ingest.ts ${args.join(" ")}: ${text}`);
  return text;
}

async function compile(
  root: string,
  out: string,
  extra: string[],
): Promise<{ code: number; text: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${REPO}/compile.ts`,
      "--capture",
      "train",
      "--out",
      out,
      "--name",
      "dataflow",
      "--root",
      root,
      ...extra,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return {
    code: r.code,
    text: new TextDecoder().decode(r.stdout) +
      new TextDecoder().decode(r.stderr),
  };
}

function line(label: string, s: SessionRun, calls: number, want?: string) {
  const report = want === undefined
    ? ""
    : s.report === want
    ? " report ok"
    : ` report ${JSON.stringify(s.report)}`;
  return `${label}: exit ${s.code}${report}, ${calls} upstream calls, ${s.ms} ms`;
}

async function main(args: string[]): Promise<void> {
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const claude = flag("claude") ?? findClaudeCode();
  if (!claude) throw new Error("No Claude Code: pass --claude PATH");
  const form = flag("form");
  const scratch = await Deno.makeTempDir({ prefix: "dfserve" });
  // --reuse DIR: the store of an earlier run's training (copied).
  const reuse = flag("reuse");
  const root = `${scratch}/root`;
  if (reuse) {
    await Deno.mkdir(root);
    const cp = await new Deno.Command("cp", {
      args: ["-r", `${reuse}/.`, root],
    }).output();
    if (!cp.success) throw new Error(`cannot copy ${reuse}`);
  }
  await using model = startDataflowModel();
  if (!reuse) {
    await using serve = await startServe({ root, upstream: model.url });
    await ingest(root, ["capture", "start", "--id", "train"]);
    for (const [i, v] of DATAFLOW_VARIANTS.slice(0, 7).entries()) {
      const before = model.requests.length;
      const s = await runSession({
        claude,
        scratch,
        name: `train-${i + 1}`,
        variant: v,
        server: serve.url,
      });
      console.log(
        line(
          `train v${i + 1}`,
          s,
          model.requests.length - before,
          expectedReport(v),
        ),
      );
      // The user marks a session that did its task (the tree form is
      // built from successful sessions).
      if (s.report === expectedReport(v) && s.session) {
        await ingest(root, [
          "capture",
          "outcome",
          "train",
          s.session,
          "--success",
        ]);
      }
    }
    await ingest(root, ["capture", "finish", "train"]);
  }
  const out = `${scratch}/out`;
  const c = await compile(root, out, form ? ["--form", form] : []);
  console.log(`compile (exit ${c.code}):\n${c.text}`);
  const pkg = `${out}/dataflow.package.json`;
  await using serve = await startServe({
    root,
    upstream: model.url,
    args: ["--package", `dataflow=${pkg}`],
  });
  const health = async () =>
    (await (await fetch(`${serve.url}/health`)).json()).model_gateway;
  if (await Promise.race([serve.exited.then(() => true), health()]) === true) {
    console.log(`serve refused the package:\n${await serve.stderr()}`);
    return;
  }
  const other = DATAFLOW_VARIANTS[7];
  for (const [k, v] of DATAFLOW_VARIANTS.slice(7).entries()) {
    for (const route of ["", "/p/dataflow"]) {
      const before = model.requests.length;
      const s = await runSession({
        claude,
        scratch,
        name: `v${k + 8}${route ? "-pkg" : "-plain"}`,
        variant: v,
        server: serve.url,
        baseUrl: serve.url + route,
      });
      console.log(
        line(
          `v${k + 8} ${route || "plain"}`,
          s,
          model.requests.length - before,
          expectedReport(v),
        ),
      );
      if (s.code !== 0) console.log(s.stdout.slice(-2000), s.stderr);
    }
  }
  for (const route of ["", "/p/dataflow"]) {
    const before = model.requests.length;
    const s = await runSession({
      claude,
      scratch,
      name: `other${route ? "-pkg" : "-plain"}`,
      variant: other,
      server: serve.url,
      baseUrl: serve.url + route,
      prompt: OTHER_PROMPT,
    });
    console.log(
      line(`other ${route || "plain"}`, s, model.requests.length - before),
    );
  }
  console.log(`gateway: ${JSON.stringify(await health())}`);
  console.log(`scratch: ${scratch}`);
}

if (import.meta.main) await main(Deno.args);
