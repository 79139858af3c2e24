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
 * @param program The program name (`ingest.ts`).
 * @param words The command's words (`["capture", "verify"]`).
 * @returns The help text.
 *
 * @example
 * ```ts
 * import { commandHelp } from "./help.ts";
 * import { ok } from "node:assert/strict";
 * const usage = "x\n\nUsage:\n  t.ts a [--n N]   do a\n  t.ts b           do b\n\nOptions:\n  -h   help";
 * const help = commandHelp(usage, "t.ts", ["a"]);
 * ok(help.includes("do a") && !help.includes("do b") && help.includes("Options:"));
 * ```
 */
export function commandHelp(
  usage: string,
  program: string,
  words: string[],
): string {
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
 * An error as the caller wants it: text, or with `--json` one JSON object
 * `{"ok": false, "error", "exit_code"}`.
 *
 * @param message The message.
 * @param exitCode The exit code it comes with.
 * @param json Whether the caller asked for JSON.
 * @returns The text to write to stderr.
 */
export function errorText(
  message: string,
  exitCode: number,
  json: boolean,
): string {
  return json
    ? JSON.stringify({ ok: false, error: message, exit_code: exitCode })
    : message;
}
