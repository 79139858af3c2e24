/**
 * File helpers shared by `install`, `uninstall` and `install --proxy`: the
 * folder they work in, reading a file that may be absent, backup stamps,
 * and JSON with comments.
 *
 * @module
 */
import { join } from "node:path";
import { canonicalJson } from "../trace/canonical_json.ts";
import type { Settings } from "../installers/hook_settings.ts";
import { UsageError } from "./io.ts";

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
