/**
 * File helpers shared by `install`, `uninstall`, `install --proxy` and
 * `doctor`: the folder they work in, where OpenCode's config and the
 * install's record of it live, reading a file that may be absent, backup
 * stamps, and JSON with comments.
 *
 * @module
 */
import { join } from "node:path";
import { canonicalJson } from "../trace/canonical_json.ts";
import type { Settings } from "../installers/hook_settings.ts";
import { type Io, UsageError } from "./io.ts";

/** The folder install works in: the project (default: here) or the user's home. */
export function baseDir(
  a: { user: boolean; home?: string; project?: string },
): string {
  const base = a.user ? a.home : (a.project ?? ".");
  if (!base) throw new UsageError("--user needs HOME (grant --allow-env=HOME)");
  return base;
}

/** OpenCode's user config folder. */
export function opencodeUserDir(
  a: { xdgConfigHome?: string },
  base: string,
): string {
  return join(a.xdgConfigHome ?? join(base, ".config"), "opencode");
}

/**
 * OpenCode's config file (`opencode.json` in the project, or in its user
 * folder) and the folder where `install --gateway` keeps its state and
 * backups of it (`.opencode/`, or the user folder itself), so that they
 * stay inside what install may write.
 *
 * @param a Project or user level, home, `XDG_CONFIG_HOME`.
 * @returns The config file, the state file, and the folder they are kept in.
 */
export function opencodeConfigFiles(
  a: { user: boolean; home?: string; project?: string; xdgConfigHome?: string },
): { file: string; state: string; keep: string } {
  const base = baseDir(a);
  const keep = a.user ? opencodeUserDir(a, base) : join(base, ".opencode");
  const file = a.user
    ? join(keep, "opencode.json")
    : join(base, "opencode.json");
  return { file, state: join(keep, "opencode.json.harness-state.json"), keep };
}

/** A file's text, or null when it does not exist. */
export function readText(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Whether a text holds the same JSON as a value. */
export function sameJson(text: string, value: Settings): boolean {
  try {
    return canonicalJson(parseJsonc(text)) === canonicalJson(value);
  } catch {
    return false;
  }
}

/** A timestamp for backup names. */
export function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "").slice(0, 15);
}

/**
 * A backup name for a file that no backup has yet: `<prefix><stamp>`, with
 * `-1`, `-2`, … when installs run within one second (an earlier backup,
 * the first being the user's own bytes, is never overwritten; the names
 * sort in the order they were made).
 *
 * @param prefix The path up to the stamp (`<file>.harness-backup-`).
 * @returns A path that does not exist.
 */
export function freshBackupPath(prefix: string): string {
  const base = `${prefix}${stamp()}`;
  for (let n = 0;; n++) {
    const path = n === 0 ? base : `${base}-${n}`;
    if (readText(path) === null) return path;
  }
}

/**
 * Parse JSON with comments and trailing commas (Gemini CLI accepts them in
 * its settings).
 *
 * @param text The text.
 * @returns The value.
 * @throws {SyntaxError} When it is not JSON even without comments.
 */
export function parseJsonc(text: string): Settings {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      i += 2;
      while (i < text.length && !(text[i] === "*" && text[i + 1] === "/")) i++;
      i++;
    } else out += c;
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"));
}

/**
 * A host's settings as they are (comments allowed; they are not kept, and
 * `io` is told so).
 *
 * @param source The host's name (for the note), the settings file (for
 * messages) and its text (`before`; null or empty: no settings).
 * @param io Output.
 * @returns The settings.
 * @throws {Error} When the text is not JSON even without comments; nothing was changed.
 */
export function readSettings(
  { host, file, before }: { host: string; file: string; before: string | null },
  io: Io,
): Settings {
  if (before === null || before.trim() === "") return {};
  try {
    const settings = parseJsonc(before);
    if (!isJson(before)) {
      io.out(
        `${host}: ${file} has comments; they are not kept in the merged file (the backup keeps them)`,
      );
    }
    return settings;
  } catch (err) {
    throw new Error(
      `${file} is not valid JSON (${
        (err as Error).message
      }); fix it by hand, nothing was changed`,
    );
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
