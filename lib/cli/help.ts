/**
 * Help per command, cut from a tool's usage text, and errors in the form
 * the caller asked for (`--json`: one JSON object on stderr).
 *
 * @module
 */

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
