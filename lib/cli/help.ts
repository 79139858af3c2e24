/**
 * Help per command, cut from a tool's usage text, and errors in the form
 * the caller asked for (`--json`: one JSON object on stderr).
 *
 * @module
 */
import { commandWords } from "./command.ts";
import { grantedEnv } from "./env.ts";

/**
 * The part of a usage text about one command: its lines (a line that
 * starts with `<program> <words…>`, and the indented lines that continue
 * it), then the text's `Options:` section. The whole text when no line
 * matches.
 *
 * @param usage The usage text (`Usage:` lines like `  ingest.ts capture verify <id>`).
 * @param o `program`: the program name (`ingest.ts`); `words`: the
 *   command's words (`["capture", "verify"]`).
 * @returns The help text.
 *
 * @example
 * ```ts
 * import { commandHelp } from "./help.ts";
 * import { ok } from "node:assert/strict";
 * const usage = "x\n\nUsage:\n  t.ts a [--n N]   do a\n  t.ts b           do b\n\nOptions:\n  -h   help";
 * const help = commandHelp(usage, { program: "t.ts", words: ["a"] });
 * ok(help.includes("do a") && !help.includes("do b") && help.includes("Options:"));
 * ```
 */
export function commandHelp(
  usage: string,
  o: { program: string; words: string[] },
): string {
  const { program, words } = o;
  const lines = usage.split("\n");
  const out: string[] = [];
  let keep = false;
  for (const line of lines) {
    const m = new RegExp(`^\\s+${program.replace(".", "\\.")}\\s+(.*)$`)
      .exec(line);
    if (m) {
      const cmd = m[1].split(/\s+/);
      keep = words.every((w, i) =>
        cmd[i] !== undefined && cmd[i].split("|").some((c) => c === w)
      );
      if (keep) out.push(line);
      continue;
    }
    if (keep && /^\s{10,}\S/.test(line)) out.push(line);
    else keep = false;
  }
  if (!out.length) return usage;
  const options = lines.findIndex((l) => l.startsWith("Options:"));
  return [
    "Usage:",
    ...out,
    ...(options >= 0 ? ["", ...lines.slice(options)] : []),
  ].join("\n");
}

/**
 * What a usage error prints under its message: the lines of the command
 * the user typed (its first two words, else its first), or, for a command
 * the usage does not know, one line pointing at `--help` — never the whole
 * usage text.
 *
 * @param usage The usage text.
 * @param o `program` (`ingest.ts`) and the `words` the user typed.
 * @returns The help to print.
 *
 * @example
 * ```ts
 * import { usageHelp } from "./help.ts";
 * import { ok } from "node:assert/strict";
 * const usage = "x\n\nUsage:\n  t.ts a [--n N]   do a\n  t.ts b           do b";
 * ok(!usageHelp(usage, { program: "t.ts", words: ["a"] }).includes("do b"));
 * ok(usageHelp(usage, { program: "t.ts", words: ["zz"] }).includes("--help"));
 * ```
 */
export function usageHelp(
  usage: string,
  o: { program: string; words: string[] },
): string {
  for (const n of [2, 1]) {
    const words = o.words.slice(0, n);
    if (words.length < n) continue;
    const help = commandHelp(usage, { program: o.program, words });
    if (help !== usage) return help;
  }
  return `Run ${o.program} --help for every command.`;
}

/**
 * An error as the caller wants it: text, or with `--json` one JSON object
 * `{"ok": false, "error", "exit_code"}`.
 *
 * @param message The message.
 * @param o `exitCode`: the exit code it comes with; `json`: whether the
 *   caller asked for JSON.
 * @returns The text to write to stderr.
 */
export function errorText(
  message: string,
  o: { exitCode: number; json: boolean },
): string {
  const { exitCode, json } = o;
  return json
    ? JSON.stringify({ ok: false, error: message, exit_code: exitCode })
    : message;
}

/** The commands of each entry that have a `deno task` of their own name. */
const OWN_TASKS: Record<string, readonly string[]> = {
  "ingest.ts": [
    "serve",
    "demo",
    "install",
    "uninstall",
    "report",
    "export",
    "doctor",
  ],
  "compile.ts": ["run"],
};

/** The task that runs each entry's other commands. */
const ENTRY_TASKS: Record<string, string> = {
  "ingest.ts": "ingest",
  "compile.ts": "compile",
};

/**
 * How the user called a command: `deno task serve`, `deno task ingest
 * capture`, when a `deno task` ran it (it sets `INIT_CWD`, which the tasks
 * grant), else the entry itself (`ingest.ts`).
 *
 * @param program The entry (`ingest.ts`, `compile.ts`).
 * @param o `word`: the command's first word; `initCwd`: `INIT_CWD` as this
 *   process may read it.
 * @returns What to call it in a message: the task and its leading word.
 *
 * @example
 * ```ts
 * import { invokedAs } from "./help.ts";
 * import { equal } from "node:assert/strict";
 * equal(invokedAs("ingest.ts", { word: "serve", initCwd: "/w" }), "deno task serve");
 * equal(invokedAs("ingest.ts", { word: "capture", initCwd: "/w" }), "deno task ingest");
 * equal(invokedAs("ingest.ts", { word: "serve", initCwd: undefined }), "ingest.ts");
 * ```
 */
export function invokedAs(
  program: string,
  o: { word: string | undefined; initCwd: string | undefined },
): string {
  if (!o.initCwd || !ENTRY_TASKS[program]) return program;
  if (o.word !== undefined && OWN_TASKS[program]?.includes(o.word)) {
    return `deno task ${o.word}`;
  }
  return `deno task ${ENTRY_TASKS[program]}`;
}

/**
 * `INIT_CWD` when the entry is this process's program (a `deno task` ran
 * it), else undefined (the entry called in-process, from a test or a
 * script, which a task may have started for another program).
 */
function taskCwd(program: string): string | undefined {
  let main = "";
  try {
    main = new URL(Deno.mainModule).pathname;
  } catch { /* no main module */ }
  return main.endsWith(`/${program}`) ? grantedEnv("INIT_CWD") : undefined;
}

/**
 * A usage error's text: `harness: MESSAGE`, then the help of the command
 * typed ({@linkcode usageHelp}), with the program named as the user called
 * it (`deno task serve …` rather than `ingest.ts serve …`).
 *
 * @param message The error's message.
 * @param o `usage`: the entry's usage text; `program`: the entry
 *   (`ingest.ts`); `words`: the command's words, or the arguments (their
 *   leading words are taken); `initCwd`: `INIT_CWD` (by default as this
 *   process may read it, when the entry is its program); `prefix`: what the
 *   message starts with (`harness`).
 * @returns The text for stderr.
 */
export function usageErrorText(
  message: string,
  o: {
    usage: string;
    program: string;
    words: string[];
    initCwd?: string;
    prefix?: string;
  },
): string {
  const words = commandWords(o.words);
  const help = usageHelp(o.usage, { program: o.program, words });
  const called = invokedAs(o.program, {
    word: words[0],
    initCwd: "initCwd" in o ? o.initCwd : taskCwd(o.program),
  });
  const escaped = o.program.replace(".", "\\.");
  // `ingest.ts serve` is `deno task serve`; `ingest.ts capture` is
  // `deno task ingest capture`.
  const entry = called === `deno task ${words[0]}`
    ? new RegExp(`^(\\s*)${escaped} ${words[0]}\\b`, "gm")
    : new RegExp(`^(\\s*)${escaped}\\b`, "gm");
  const shown = called === o.program ? help : help
    .replace(entry, `$1${called}`)
    .replace(`Run ${o.program} --help`, `Run ${called} --help`);
  return `${o.prefix ?? "harness"}: ${message}\n\n${shown}`;
}
