/**
 * The compile entry: turns captures into a behavior package, and explains
 * packages.
 *
 * ```sh
 * deno run --allow-read --allow-write=out --allow-env=HARNESS_ROOT compile.ts --capture cap_1 --out out
 * deno run --allow-read compile.ts explain out/behavior.package.json
 * deno run --allow-read --allow-write=out compile.ts report out/behavior.package.json --out out/behavior.html
 * ```
 *
 * Permissions: `--allow-read` (the store's spools and blobs, and the map
 * files) and `--allow-write=<out dir>` only: compile never writes the store.
 * The `compile` task grants the folder it is run from (`$INIT_CWD`, where
 * relative paths are taken from) and `--allow-env=INIT_CWD`.
 *
 * @module
 */
import { commandHelp, errorText } from "./lib/cli/help.ts";
import { grantedEnv as env } from "./lib/cli/env.ts";
import { parseArgs } from "node:util";
import { resolveRoot, userPath } from "./lib/cli/root.ts";
import { type Io, UsageError } from "./lib/cli/io.ts";

const USAGE = `harness compile: captures in, a verified behavior package out

Usage:
  compile.ts --capture ID [--capture ID ...] --out DIR [--name NAME] [--task-family TEXT]
             [--canonical map.json] [--contracts contracts.json] [--effects effects.json]
             [--version V] [--fidelity F3] [--json] [--root DIR | --db postgres://…]
  compile.ts explain PACKAGE.json [--json]
  compile.ts report PACKAGE.json --out FILE.html   (the explain view as one self-contained HTML file)
  compile.ts run PACKAGE.json --capabilities MODULE.ts [--model PROVIDER/MODEL] [--model-url URL]
             [--user-file FILE.jsonl] [--episode N] [--input TEXT] [--trace] [--capture ID]
             [--root DIR] [--json] [-- MODULE ARGS...]
             (MODULE exports createCapabilities({episode, args}) → {tools, schemas?,
             instructions?, input?, model?, outcome?}; an agent-form package runs a
             conversation with --model openai/… or anthropic/…: user messages from
             --user-file (one JSON string per line) or from standard input)

  --canonical  {"host tool name": "logical id"}
  --contracts  {"<fact key>": ["contract source id", ...]}   (lifts those facts to E3)
  --effects    {"tool": "read" | "write" | "destructive"}`;

const OPTIONS = {
  capture: { type: "string", multiple: true },
  out: { type: "string" },
  name: { type: "string" },
  "task-family": { type: "string" },
  canonical: { type: "string" },
  contracts: { type: "string" },
  effects: { type: "string" },
  version: { type: "string" },
  fidelity: { type: "string" },
  json: { type: "boolean", default: false },
  root: { type: "string" },
  db: { type: "string" },
  capabilities: { type: "string" },
  episode: { type: "string" },
  input: { type: "string" },
  trace: { type: "boolean", default: false },
  model: { type: "string" },
  "model-url": { type: "string" },
  "user-file": { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

const io: Io = { out: (t) => console.log(t), err: (t) => console.error(t) };

/**
 * Run one command line.
 *
 * @param args Command-line arguments.
 * @returns Exit code.
 */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    io.err(
      args.includes("--json")
        ? errorText((err as Error).message, 2, true)
        : `harness compile: ${(err as Error).message}\n\n${USAGE}`,
    );
    return 2;
  }
  const { values: v, positionals: p } = parsed;
  // Under `deno task` the entry runs in the checkout: the paths of `compile`,
  // `explain` and `report` are the user's folder's (INIT_CWD).
  const base = p[0] === "run" ? undefined : env("INIT_CWD");
  for (
    const k of ["out", "root", "canonical", "contracts", "effects"] as const
  ) {
    if (v[k] !== undefined) v[k] = userPath(v[k], base);
  }
  if (p[1] !== undefined && base) p[1] = userPath(p[1], base);
  if (v.help) {
    io.out(p.length ? commandHelp(USAGE, "compile.ts", p.slice(0, 1)) : USAGE);
    return 0;
  }
  try {
    const cmd = await import("./lib/cli/cmd_compile.ts");
    if (p[0] === "report") {
      if (!p[1] || !v.out) {
        throw new UsageError("report needs a package file and --out FILE.html");
      }
      return await cmd.reportCommand(p[1], v.out, v.json, io);
    }
    if (p[0] === "explain") {
      if (!p[1]) throw new UsageError("explain needs a package file");
      return cmd.explainCommand(p[1], v.json, io);
    }
    if (p[0] === "run") {
      if (!p[1] || !v.capabilities) {
        throw new UsageError(
          "run needs a package file and --capabilities MODULE",
        );
      }
      const { runCommand, stdinLines } = await import("./lib/cli/cmd_run.ts");
      const { MODEL_ENV_VARS } = await import("./lib/models/open_model.ts");
      return await runCommand(p[1], {
        capabilities: v.capabilities,
        model: v.model,
        modelUrl: v["model-url"],
        userFile: v["user-file"],
        episode: v.episode,
        input: v.input,
        trace: v.trace,
        capture: v.capture?.[0],
        root: resolveRoot(v.root, env("HARNESS_ROOT")),
        json: v.json,
        args: p.slice(2),
        env: Object.fromEntries(MODEL_ENV_VARS.map((k) => [k, env(k)])),
        stdinLines,
      }, io);
    }
    if (p.length) throw new UsageError(`unknown command "${p[0]}"`);
    if (!v.capture?.length || !v.out) {
      throw new UsageError("--capture and --out are required");
    }
    return await cmd.compileCommand({
      captures: v.capture,
      out: v.out,
      root: resolveRoot(v.root, env("HARNESS_ROOT"), base),
      db: v.db,
      name: v.name,
      taskFamily: v["task-family"],
      canonical: v.canonical,
      contracts: v.contracts,
      effects: v.effects,
      version: v.version,
      fidelity: v.fidelity,
      json: v.json,
    }, io);
  } catch (err) {
    const code = err instanceof UsageError ? 2 : 1;
    const msg = `harness compile: ${(err as Error).message}`;
    io.err(
      v.json
        ? errorText(msg, code, true)
        : code === 2
        ? `${msg}\n\n${USAGE}`
        : msg,
    );
    return code;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
