/**
 * Text output made safe for a terminal: control characters a capture
 * carries (a tool's `file_path`, a label) are shown escaped, never sent to
 * the terminal as escape sequences.
 *
 * @module
 */

import type { Io } from "./io.ts";

// C0 controls but tab and newline, DEL, C1 controls, and the bidi
// overrides and isolates (which reorder what is shown): matching control
// characters is the point here.
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
// The same, with carriage return allowed (progress lines on stderr).
const CONTROL_BUT_CR =
  // deno-lint-ignore no-control-regex
  /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * Escape the control characters of a text bound for a terminal: ESC, BEL,
 * backspace, carriage return and the other C0 and C1 controls, DEL, and the
 * bidi overrides become `\xNN` or `\uNNNN`; tab and newline stay. JSON
 * output is unchanged (`JSON.stringify` already escapes them).
 *
 * @param text What is about to be printed.
 * @param options `carriageReturn`: keep `\r` (progress lines).
 * @returns The text, printable as is.
 * @example
 * ```ts
 * import { escapeTerminalText } from "./terminal_text.ts";
 * import { equal } from "node:assert/strict";
 * equal(escapeTerminalText("a\x1b[2Jb"), "a\\x1b[2Jb");
 * ```
 */
export function escapeTerminalText(
  text: string,
  options: { carriageReturn?: boolean } = {},
): string {
  return text.replace(
    options.carriageReturn ? CONTROL_BUT_CR : CONTROL,
    escapeChar,
  );
}

/**
 * Wrap output channels so that every text written through them is escaped
 * with {@linkcode escapeTerminalText}: the one boundary of text output.
 *
 * @param io The channels to write to.
 * @returns Channels that escape first (stderr keeps `\r` for progress).
 */
export function terminalIo(io: Io): Io {
  return {
    out: (text) => io.out(escapeTerminalText(text)),
    err: (text) => io.err(escapeTerminalText(text, { carriageReturn: true })),
  };
}
