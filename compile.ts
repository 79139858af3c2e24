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
import { grantedEnv } from "./lib/cli/env.ts";
import { parseArgs } from "node:util";
import { join } from "node:path";
import { HarnessStore } from "./lib/store/store.ts";
import { loadEpisodes } from "./lib/lineage/episodes.ts";
import type { Episode } from "./lib/lineage/records.ts";
import {
  type BehaviorPackage,
  compileBehavior,
} from "./lib/compiler/package.ts";
import { explainPackage, summarizePackage } from "./lib/compiler/explain.ts";
import { describeEffects } from "./lib/compiler/effects.ts";
import { resolveRoot, userPath } from "./lib/cli/root.ts";
import { UsageError } from "./lib/cli/io.ts";

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

const env = grantedEnv;

function readJson(
  path: string | undefined,
  what: string,
): Record<string, never> | null {
  if (!path) return null;
  try {
    return JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new Error(
      `Cannot read the ${what} file ${path}: ${(err as Error).message}`,
    );
  }
}

function readPackage(path: string): BehaviorPackage {
  let pkg: BehaviorPackage;
  try {
    pkg = JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new Error(
      `Cannot read the package ${path}: ${(err as Error).message}`,
    );
  }
  if (pkg?.schema_version !== "harness.package.v1" || !pkg.ir?.nodes) {
    throw new Error(
      `${path} is not a behavior package (harness.package.v1); compile.ts --capture ID --out DIR writes one`,
    );
  }
  return pkg;
}

function progressLine(stage: string, done: number, total: number): string {
  const width = 24;
  const filled = total ? Math.round((done / total) * width) : width;
  return `\r[${"#".repeat(filled)}${
    ".".repeat(width - filled)
  }] ${stage} ${done}/${total}   `;
}

/**
 * Run one command line.
 *
 * @param args Command-line arguments.
 * @returns Exit code.
 */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
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
      },
    });
  } catch (err) {
    console.error(
      args.includes("--json")
        ? errorText((err as Error).message, 2, true)
        : `harness compile: ${(err as Error).message}\n\n${USAGE}`,
    );
    return 2;
  }
  const { values, positionals } = parsed;
  // Under `deno task` the entry runs in the checkout: the paths of `compile`,
  // `explain` and `report` are the user's folder's (INIT_CWD).
  const base = positionals[0] === "run" ? undefined : env("INIT_CWD");
  for (
    const k of ["out", "root", "canonical", "contracts", "effects"] as const
  ) {
    if (values[k] !== undefined) values[k] = userPath(values[k], base);
  }
  if (positionals[1] !== undefined && base) {
    positionals[1] = userPath(positionals[1], base);
  }
  if (values.help) {
    console.log(
      positionals.length
        ? commandHelp(USAGE, "compile.ts", positionals.slice(0, 1))
        : USAGE,
    );
    return 0;
  }
  try {
    if (positionals[0] === "report") {
      if (!positionals[1] || !values.out) {
        throw new Error("report needs a package file and --out FILE.html");
      }
      const pkg = readPackage(positionals[1]);
      const { packageReportData } = await import(
        "./lib/report/package_data.ts"
      );
      const { renderPackageReport } = await import(
        "./lib/report/package_html.ts"
      );
      const data = packageReportData(pkg);
      Deno.writeTextFileSync(values.out, renderPackageReport(data));
      console.log(
        values.json
          ? JSON.stringify({
            package: pkg.manifest.name,
            out: values.out,
            nodes: data.nodes.length,
          })
          : `Wrote ${values.out}: package ${pkg.manifest.name}, ${data.nodes.length} nodes`,
      );
      return 0;
    }
    if (positionals[0] === "explain") {
      if (!positionals[1]) throw new Error("explain needs a package file");
      const pkg = readPackage(positionals[1]);
      console.log(
        values.json
          ? JSON.stringify(
            { summary: summarizePackage(pkg), provenance: pkg.provenance },
            null,
            2,
          )
          : explainPackage(pkg),
      );
      return 0;
    }
    if (positionals[0] === "run") {
      if (!positionals[1] || !values.capabilities) {
        throw new UsageError(
          "run needs a package file and --capabilities MODULE",
        );
      }
      const { runCommand } = await import("./lib/cli/cmd_run.ts");
      const { MODEL_ENV_VARS } = await import("./lib/models/open_model.ts");
      return await runCommand(positionals[1], {
        capabilities: values.capabilities,
        model: values.model,
        modelUrl: values["model-url"],
        userFile: values["user-file"],
        episode: values.episode,
        input: values.input,
        trace: values.trace,
        capture: values.capture?.[0],
        root: resolveRoot(values.root, env("HARNESS_ROOT")),
        json: values.json,
        args: positionals.slice(2),
        env: Object.fromEntries(MODEL_ENV_VARS.map((k) => [k, env(k)])),
        stdinLines,
      }, { out: (t) => console.log(t), err: (t) => console.error(t) });
    }
    if (positionals.length) {
      throw new Error(`unknown command "${positionals[0]}"`);
    }
    const captures = values.capture ?? [];
    if (!captures.length || !values.out) {
      console.error(
        values.json
          ? errorText("--capture and --out are required", 2, true)
          : `harness compile: --capture and --out are required\n\n${USAGE}`,
      );
      return 2;
    }
    const episodes: Episode[] = [];
    if (values.db !== undefined) {
      // The team database: the same episodes, from the stored lines
      // (`--db env`: HARNESS_DB_URL; PG* variables and ~/.pgpass fill in).
      const { DbStore } = await import("./lib/team/db_store.ts");
      const { dbTarget } = await import("./lib/cli/env.ts");
      const db = await DbStore.open(
        await dbTarget(values.db, (t) => console.error(t)),
      );
      try {
        for (const id of captures) {
          episodes.push(...await loadEpisodes(db, db.resolveName(id)));
        }
      } finally {
        await db.close();
      }
    } else {
      const root = resolveRoot(values.root, env("HARNESS_ROOT"), base);
      using store = new HarnessStore(root, { readOnly: true, index: false });
      for (const id of captures) {
        if (!store.hasCapture(id)) {
          throw new Error(`Capture "${id}" not found in store ${root}`);
        }
        episodes.push(...await loadEpisodes(store, id));
      }
    }
    const tty = Deno.stderr.isTerminal();
    let last = "";
    const result = compileBehavior(episodes, {
      name: values.name ?? "behavior",
      taskFamily: values["task-family"],
      canonical: readJson(values.canonical, "canonical map"),
      contracts: readJson(values.contracts, "contracts"),
      effects: readJson(values.effects, "effects"),
      version: values.version,
      captureFidelity: values.fidelity,
      onProgress: (stage, done, total) => {
        if (tty) {
          Deno.stderr.writeSync(
            new TextEncoder().encode(progressLine(stage, done, total)),
          );
        } else if (stage !== last) console.error(`compile: ${stage}`);
        last = stage;
      },
    });
    if (tty) Deno.stderr.writeSync(new TextEncoder().encode("\n"));
    Deno.mkdirSync(values.out, { recursive: true });
    const file = join(
      values.out,
      `${result.package.manifest.name}.package.json`,
    );
    Deno.writeTextFileSync(
      file,
      JSON.stringify(result.package, null, 2) + "\n",
    );
    if (values.json) {
      console.log(JSON.stringify(
        {
          file,
          digest: result.package.digest,
          manifest: result.package.manifest,
          stats: result.compiled.stats,
          effects: {
            source: result.effects.source,
            unknown: result.effects.unknown,
            inferred: result.effects.inferred,
            unknown_calls: result.effects.unknown_calls,
          },
          verification: {
            ...result.verification,
            problems: result.verification.problems.slice(0, 20),
          },
        },
        null,
        2,
      ));
    } else {
      console.log(
        `${summarizePackage(result.package)}\n  written to    ${file}\n${
          describeEffects(result.effects).map((l) => `  ${l}`).join("\n")
        }`,
      );
    }
    return result.verification.structural_ok ? 0 : 1;
  } catch (err) {
    const code = err instanceof UsageError ? 2 : 1;
    console.error(
      errorText(
        `harness compile: ${(err as Error).message}`,
        code,
        values.json,
      ),
    );
    return code;
  }
}

async function* stdinLines(): AsyncIterable<string> {
  const tty = Deno.stdin.isTerminal();
  const decoder = new TextDecoder();
  let buf = "";
  const prompt = () => {
    if (tty) Deno.stderr.writeSync(new TextEncoder().encode("you> "));
  };
  prompt();
  for await (const chunk of Deno.stdin.readable) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield line;
      prompt();
    }
  }
  if (buf.trim()) yield buf.trim();
}

if (import.meta.main) Deno.exit(await main(Deno.args));
