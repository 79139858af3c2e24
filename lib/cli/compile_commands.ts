/**
 * The commands of `compile.ts`: compile (no command word), `explain`,
 * `report`, `verify`, `keygen` and `run`, the flags each reads and how it
 * runs; the usage text whose lines are each command's help.
 *
 * @module
 */
import type { CommandLine, CommandTable, Options } from "./command.ts";
import type { Io } from "./io.ts";
import { grantedEnv as env } from "./env.ts";
import { UsageError } from "./io.ts";
import { resolveRoot, userPath } from "./root.ts";
import { requireOutputAccess } from "./output_access.ts";
import { fileURLToPath } from "node:url";

/** Every command of `compile.ts` and its flags. */
export const COMPILE_USAGE: string =
  `harness compile: captures in, a verified behavior package out

Usage:
  compile.ts --capture ID [--capture ID ...] --out DIR [--name NAME] [--task-family TEXT]
             [--canonical map.json] [--contracts contracts.json] [--effects effects.json]
             [--version V] [--fidelity F3] [--form auto|agent|tree] [--no-tune] [--json]
             [--sign KEYFILE] [--replace] [--root DIR | --db postgres://…]
  compile.ts explain PACKAGE.json [--json]   (exit 1, with a warning, when the package was altered after compile)
  compile.ts report PACKAGE.json --out FILE.html   (the explain view as one self-contained HTML file)
  compile.ts run PACKAGE.json --capabilities MODULE.ts [--model PROVIDER/MODEL] [--model-url URL]
             [--model-timeout SECONDS] [--max-tokens N] [--user-file FILE.jsonl] [--episode N]
             [--input TEXT] [--trace] [--capture ID] [--trust KEY ...] [--root DIR] [--json]
             [-- MODULE ARGS...]
             (MODULE exports createCapabilities({episode, args}) → {tools, schemas?,
             instructions?, input?, model?, outcome?}; an agent-form package runs a
             conversation with --model openai/… or anthropic/…: user messages from
             --user-file (one JSON string per line) or from standard input)
  compile.ts verify PACKAGE.json [--trust KEY ...] [--json]
             (from the package alone: format, digest, structure, the recorded replay
             verdict and promotion, effects, signature; exit 1 when a check fails)
  compile.ts keygen --out DIR   (an Ed25519 key pair: DIR/signing_key.jwk, private, for
             --sign; DIR/signing_key.pub.jwk for --trust)

  --canonical  {"host tool name": "logical id"}
  --contracts  {"<fact key>": ["contract source id", ...]}   (lifts those facts to E3)
  --effects    {"tool": "read" | "write" | "destructive"}
  --form       auto (default: the tree when it replays every episode clean, else the
               agent form), agent (what serve --package serves inside an agent), or tree
  --no-tune    agent form: keep the default tuning parameters instead of choosing
               them by cross-validation on the captured episodes (faster)
  --name       the package's name and file name: letters, digits, ".", "_", "-"
               (default "behavior"); a package of that name in --out is kept
               unless --replace
  --sign       sign the package with an Ed25519 signing key, a JSON Web Key file
               {"kty":"OKP","crv":"Ed25519","x":…,"d":…} (keygen makes one); the
               signature goes beside the digest, which does not change
  --trust      a trusted public key: ed25519:<x>, or a key file (JWK); repeatable.
               run refuses a package that is unsigned or signed by another key`;

/** Flags every `compile.ts` command takes. */
export const COMPILE_COMMON: Options = {
  json: { type: "boolean", default: false },
  root: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
};

/** What a `compile.ts` command is given. */
export interface CompileContext {
  /** The command line. */
  cl: CommandLine;
  /** Where output goes. */
  io: Io;
  /** `--json`. */
  json: boolean;
  /** The file after the command word (a package), as the user meant it. */
  file: string | undefined;
  /**
   * A path flag's value as the user meant it: under `deno task` the entry
   * runs in the checkout, and the paths of compile, `explain` and `report`
   * are the user's folder's (`INIT_CWD`); `run`'s are the checkout's.
   *
   * @param flag The flag without `--`.
   * @returns The path, if given.
   */
  path(flag: string): string | undefined;
  /** The store root (`--root`, else `HARNESS_ROOT`, else `./.harness`). */
  root(): string;
}

/**
 * The context of one command line.
 *
 * @param cl The parsed command line.
 * @param io Where output goes.
 * @returns The context.
 */
export function compileContext(cl: CommandLine, io: Io): CompileContext {
  const p = cl.positionals;
  const base = p[0] === "run" ? undefined : env("INIT_CWD");
  const path = (flag: string) => {
    const v = cl.string(flag);
    return v === undefined ? undefined : userPath(v, base);
  };
  return {
    cl,
    io,
    json: cl.flag("json"),
    file: p[1] !== undefined && base ? userPath(p[1], base) : p[1],
    path,
    root: () => resolveRoot(path("root"), env("HARNESS_ROOT"), base),
  };
}

/** Compile itself: the command line without a command word. */
export const COMPILE: CommandTable<CompileContext>[string] = {
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
    db: { type: "string" },
    "no-tune": { type: "boolean", default: false },
    form: { type: "string" },
    sign: { type: "string" },
    replace: { type: "boolean", default: false },
  },
  run: async (c) => {
    const captures = c.cl.strings("capture");
    const out = c.path("out");
    if (!captures?.length || !out) {
      throw new UsageError("--capture and --out are required");
    }
    outputAccess(out, "compile");
    const { compileCommand } = await import("./cmd_compile.ts");
    return await compileCommand({
      captures,
      out,
      root: c.root(),
      db: c.cl.string("db"),
      name: c.cl.string("name"),
      sign: c.path("sign"),
      taskFamily: c.cl.string("task-family"),
      canonical: c.path("canonical"),
      contracts: c.path("contracts"),
      effects: c.path("effects"),
      version: c.cl.string("version"),
      fidelity: c.cl.string("fidelity"),
      tune: !c.cl.flag("no-tune"),
      form: c.cl.string("form"),
      json: c.json,
      replace: c.cl.flag("replace"),
    }, c.io);
  },
};

/** The commands of `compile.ts` with a command word. */
export const COMPILE_COMMANDS: CommandTable<CompileContext> = {
  explain: {
    options: {},
    run: async (c) => {
      if (!c.file) throw new UsageError("explain needs a package file");
      const { explainCommand } = await import("./cmd_compile.ts");
      return explainCommand({ path: c.file, json: c.json }, c.io);
    },
  },
  report: {
    options: { out: { type: "string" } },
    run: async (c) => {
      const out = c.path("out");
      if (!c.file || !out) {
        throw new UsageError("report needs a package file and --out FILE.html");
      }
      outputAccess(out, "compile report");
      const { reportCommand } = await import("./cmd_compile.ts");
      return await reportCommand(
        { path: c.file, out, json: c.json },
        c.io,
      );
    },
  },
  verify: {
    options: { trust: { type: "string", multiple: true } },
    run: async (c) => {
      if (!c.file) throw new UsageError("verify needs a package file");
      const { verifyCommand } = await import("./cmd_verify.ts");
      return await verifyCommand({
        path: c.file,
        trust: c.cl.strings("trust")?.map((k) => trustPath(c, k)),
        json: c.json,
      }, c.io);
    },
  },
  keygen: {
    options: { out: { type: "string" } },
    run: async (c) => {
      const out = c.path("out");
      if (!out) throw new UsageError("keygen needs --out DIR");
      outputAccess(out, "compile keygen");
      const { keygenCommand } = await import("./cmd_keygen.ts");
      return await keygenCommand({ out, json: c.json }, c.io);
    },
  },
  run: {
    options: {
      trust: { type: "string", multiple: true },
      capabilities: { type: "string" },
      model: { type: "string" },
      "model-url": { type: "string" },
      "model-timeout": { type: "string" },
      "max-tokens": { type: "string" },
      "user-file": { type: "string" },
      episode: { type: "string" },
      input: { type: "string" },
      trace: { type: "boolean", default: false },
      capture: { type: "string", multiple: true },
    },
    run: runPackageCommand,
  },
};

/** Refuse an `--out` this process may not write, before any work. */
function outputAccess(out: string, command: string): void {
  const entry = fileURLToPath(new URL("../../compile.ts", import.meta.url));
  requireOutputAccess({
    path: out,
    task: command,
    granted: env("INIT_CWD"),
    rerun:
      `deno run --allow-read --allow-write={WRITE} --allow-env=HARNESS_ROOT ${entry}${
        command === "compile" ? "" : command.slice("compile".length)
      }`,
  });
}

/** A `--trust` value: a key's name as given, a key file as the user meant it. */
function trustPath(c: CompileContext, value: string): string {
  if (value.startsWith("ed25519:")) return value;
  const base = c.cl.positionals[0] === "run" ? undefined : env("INIT_CWD");
  return userPath(value, base);
}

async function runPackageCommand(c: CompileContext): Promise<number> {
  const capabilities = c.cl.string("capabilities");
  if (!c.file || !capabilities) {
    throw new UsageError("run needs a package file and --capabilities MODULE");
  }
  const { runCommand, stdinLines } = await import("./cmd_run.ts");
  const { MODEL_ENV_VARS } = await import("../models/open_model.ts");
  return await runCommand({
    package: c.file,
    capabilities,
    model: c.cl.string("model"),
    modelUrl: c.cl.string("model-url"),
    modelTimeout: c.cl.string("model-timeout"),
    maxTokens: c.cl.string("max-tokens"),
    userFile: c.cl.string("user-file"),
    episode: c.cl.string("episode"),
    input: c.cl.string("input"),
    trace: c.cl.flag("trace"),
    capture: c.cl.strings("capture")?.[0],
    trust: c.cl.strings("trust"),
    root: c.root(),
    json: c.json,
    args: c.cl.positionals.slice(2),
    env: Object.fromEntries(MODEL_ENV_VARS.map((k) => [k, env(k)])),
    stdinLines,
  }, c.io);
}
