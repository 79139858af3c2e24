/**
 * Gemini CLI's `.env` files, as `install gemini-cli --gateway` edits them
 * (pure: text in, text out).
 *
 * Gemini CLI 0.61 takes its model base URL from `GOOGLE_GEMINI_BASE_URL`
 * (its settings have no such key) and reads **exactly one** env file
 * ({@linkcode geminiEnvFile}): walking up from the folder it starts in, the
 * first `<dir>/.gemini/.env` or `<dir>/.env`, then `~/.gemini/.env`, then
 * `~/.env` (`.gemini/.env` files only in a trusted folder, as hooks). A
 * variable already exported wins over the file. So the install edits the
 * file Gemini CLI reads for the project, and creates `<project>/.gemini/.env`
 * only when Gemini CLI would read no file at all there: a new project file
 * would hide the user's `~/.gemini/.env` (where the API key usually is;
 * Gemini CLI then exits 41 asking for `GEMINI_API_KEY`).
 *
 * The edits are line by line ({@linkcode pointEnvText},
 * {@linkcode unpointEnvText}): every other line stays as it was, undoing
 * gives the bytes back, and nothing is copied out of the file into the
 * install's state (a header there may be a secret). No token is ever
 * written: files in `.gemini/` are listed to the model.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { CAPTURE_HEADER } from "./gateway_settings.ts";

/** The variable Gemini CLI reads its Gemini API base URL from. */
export const GEMINI_BASE_URL_VAR = "GOOGLE_GEMINI_BASE_URL";

/** The variable whose `Name: value` list Gemini CLI sends as headers with every model request. */
export const GEMINI_HEADERS_VAR = "GEMINI_CLI_CUSTOM_HEADERS";

/** `KEY=value` (or `export KEY=value`) at the start of a line. */
const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/;

/** A value as dotenv reads it: quotes taken off, a trailing comment dropped. */
function valueOf(raw: string): string {
  const v = raw.trim();
  const q = v[0];
  if ((q === '"' || q === "'" || q === "`") && v.lastIndexOf(q) > 0) {
    const inner = v.slice(1, v.lastIndexOf(q));
    return q === '"' ? inner.replace(/\\n/g, "\n") : inner;
  }
  const hash = v.search(/\s#/);
  return (hash < 0 ? v : v.slice(0, hash)).trim();
}

/**
 * The variables of an env file (the last of a repeated name wins).
 *
 * @param text The file's text.
 * @returns Name → value.
 *
 * @example
 * ```ts
 * import { deepEqual } from "node:assert/strict";
 * import { parseEnvFile } from "./gemini_env.ts";
 * deepEqual(
 *   parseEnvFile('# key\nGEMINI_API_KEY="abc"\nexport X=1 # one\n'),
 *   { GEMINI_API_KEY: "abc", X: "1" },
 * );
 * ```
 */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*#/.test(line)) continue;
    const m = LINE.exec(line);
    if (m) out[m[1]] = valueOf(m[2]);
  }
  return out;
}

/** A value written into an env file (quoted when dotenv would misread it bare). */
function written(value: string): string {
  return /^[^\s#"'`]*$/.test(value) ? value : JSON.stringify(value);
}

/** Where Gemini CLI looks for its env file. */
export interface EnvLookup {
  /** The folder Gemini CLI starts in. */
  dir: string;
  /** The user's home. */
  home: string;
  /** Whether a file is there. */
  exists(path: string): boolean;
}

/**
 * The one env file Gemini CLI 0.61 reads when started in `dir` (a trusted
 * folder): walking up, the first `.gemini/.env` or `.env`, then
 * `~/.gemini/.env`, then `~/.env`; null when there is none.
 *
 * @param at The folder, the home, and a file check.
 * @returns The file's path, or null.
 */
export function geminiEnvFile(at: EnvLookup): string | null {
  let dir = resolve(at.dir);
  for (;;) {
    for (const p of [join(dir, ".gemini", ".env"), join(dir, ".env")]) {
      if (at.exists(p)) return p;
    }
    const up = resolve(dir, "..");
    if (up === dir) break;
    dir = up;
  }
  for (const p of [join(at.home, ".gemini", ".env"), join(at.home, ".env")]) {
    if (at.exists(p)) return p;
  }
  return null;
}

/** Which env file a gateway install edits, or why none may be. */
export type EnvTarget =
  | { file: string; create: boolean }
  | { refused: string; reads: string };

/**
 * The env file `install gemini-cli --gateway` edits: the one Gemini CLI
 * reads for the project (or, `--user`, the user's), when it is the
 * project's (the user's) own; `<base>/.gemini/.env`, created, when Gemini
 * CLI reads none. A file elsewhere (a folder above the project, the user's
 * for a project install) is not edited, and a new one would hide it:
 * refused, with the file it reads.
 *
 * @param at The project (or home) folder, the home, a file check.
 * @param user A user-level install.
 * @returns The file, or the refusal.
 */
export function geminiEnvTarget(at: EnvLookup, user: boolean): EnvTarget {
  const base = resolve(user ? at.home : at.dir);
  const own = [join(base, ".gemini", ".env"), join(base, ".env")];
  const reads = user
    ? own.find((p) => at.exists(p)) ?? null
    : geminiEnvFile({ ...at, dir: base });
  if (reads === null) return { file: own[0], create: true };
  if (own.includes(reads)) return { file: reads, create: false };
  return {
    reads,
    refused:
      `Gemini CLI reads exactly one env file, and started in ${base} it reads ${reads}: a new ${
        own[0]
      } would hide it (and the GEMINI_API_KEY it may hold)`,
  };
}

/** The line of an env file that sets a variable last (dotenv: the last wins), or -1. */
function lastLine(lines: string[], name: string): number {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/^\s*#/.test(lines[i])) continue;
    if (LINE.exec(lines[i].replace(/\r$/, ""))?.[1] === name) return i;
  }
  return -1;
}

function linesOf(text: string | null): string[] {
  const lines = text === null || text === "" ? [] : text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function textOf(lines: string[]): string {
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}

/** What a Gemini gateway install changed in the env file, line by line (kept in its state file). */
export interface GeminiEnvEdit {
  /** The base URL set. */
  base_url: string;
  /** The line that set `GOOGLE_GEMINI_BASE_URL` before (Google's own URL), or null. */
  base_line: string | null;
  /** The `GEMINI_CLI_CUSTOM_HEADERS` entry added (`x-harness-capture: …`), if any. */
  header?: string;
  /** The install added the `GEMINI_CLI_CUSTOM_HEADERS` line itself. */
  header_line_created?: boolean;
}

/**
 * Point an env file at the gateway: `GOOGLE_GEMINI_BASE_URL` set (the line
 * that set it replaced: the caller refused any but Google's own), and with a
 * capture an `x-harness-capture` entry added at the end of
 * `GEMINI_CLI_CUSTOM_HEADERS` (a later entry wins in Gemini CLI), the
 * entries there kept. Nothing else is touched, and nothing is copied out of
 * the file (a header there may be a secret).
 *
 * @param text The file's text (null: none).
 * @param o The base URL and the capture.
 * @returns The new text and what was changed.
 */
export function pointEnvText(
  text: string | null,
  o: { base_url: string; capture?: string },
): { text: string; edit: GeminiEnvEdit } {
  const lines = linesOf(text);
  const at = lastLine(lines, GEMINI_BASE_URL_VAR);
  const edit: GeminiEnvEdit = {
    base_url: o.base_url,
    base_line: at >= 0 ? lines[at] : null,
  };
  const line = `${GEMINI_BASE_URL_VAR}=${written(o.base_url)}`;
  if (at >= 0) lines[at] = line;
  else lines.push(line);
  if (o.capture !== undefined) {
    const entry = `${CAPTURE_HEADER}: ${o.capture}`;
    edit.header = entry;
    const h = lastLine(lines, GEMINI_HEADERS_VAR);
    if (h < 0) {
      lines.push(`${GEMINI_HEADERS_VAR}=${JSON.stringify(entry)}`);
      edit.header_line_created = true;
    } else {
      const l = lines[h].replace(/\r$/, "");
      const cr = lines[h].endsWith("\r") ? "\r" : "";
      const m = /^(.*?=\s*)(["'`])(.*)\2(\s*(?:#.*)?)$/.exec(l);
      if (m) lines[h] = `${m[1]}${m[2]}${m[3]}, ${entry}${m[2]}${m[4]}${cr}`;
      else {
        const c = l.search(/\s#/);
        lines[h] = c < 0
          ? `${l}, ${entry}${cr}`
          : `${l.slice(0, c)}, ${entry}${l.slice(c)}${cr}`;
      }
    }
  }
  return { text: textOf(lines), edit };
}

/**
 * Take a gateway install's lines out of an env file: the base URL line
 * goes back to the line that was there (or goes), the header entry is taken
 * off (its line goes when the install added it). A line changed since the
 * install is left as it is (said in `kept`).
 *
 * @param text The file's text now.
 * @param edit What the install changed.
 * @returns The new text, and the variables left because they were changed since.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * import { pointEnvText, unpointEnvText } from "./gemini_env.ts";
 * const mine = "KEY='k' # mine\nGEMINI_CLI_CUSTOM_HEADERS=X-Team: blue\n";
 * const { text, edit } = pointEnvText(mine, { base_url: "http://127.0.0.1:8848", capture: "c1" });
 * equal(unpointEnvText(text, edit).text, mine);
 * ```
 */
export function unpointEnvText(
  text: string,
  edit: GeminiEnvEdit,
): { text: string; kept: string[] } {
  const lines = linesOf(text);
  const kept: string[] = [];
  if (edit.header !== undefined) {
    const h = lastLine(lines, GEMINI_HEADERS_VAR);
    const l = h >= 0 ? lines[h] : "";
    if (h >= 0 && edit.header_line_created) {
      if (
        l.replace(/\r$/, "") ===
          `${GEMINI_HEADERS_VAR}=${JSON.stringify(edit.header)}`
      ) lines.splice(h, 1);
      else kept.push(GEMINI_HEADERS_VAR);
    } else if (h >= 0 && l.includes(`, ${edit.header}`)) {
      const i = l.lastIndexOf(`, ${edit.header}`);
      lines[h] = l.slice(0, i) + l.slice(i + edit.header.length + 2);
    } else kept.push(GEMINI_HEADERS_VAR);
  }
  const at = lastLine(lines, GEMINI_BASE_URL_VAR);
  if (
    at >= 0 &&
    parseEnvFile(lines[at])[GEMINI_BASE_URL_VAR] === edit.base_url
  ) {
    if (edit.base_line !== null) lines[at] = edit.base_line;
    else lines.splice(at, 1);
  } else kept.push(GEMINI_BASE_URL_VAR);
  return { text: textOf(lines), kept };
}

/** How a Gemini CLI signs in, as far as the base URL cares. */
export interface GeminiAuth {
  /** The auth type (`gemini-api-key`, `oauth-personal`, `vertex-ai`, …), or null when none is chosen. */
  type: string | null;
  /** Where it was read (a settings file, or an environment variable). */
  from: string | null;
  /** Whether model calls follow `GOOGLE_GEMINI_BASE_URL` with it. */
  follows_base_url: boolean;
}

/**
 * Whether Gemini CLI's model calls follow `GOOGLE_GEMINI_BASE_URL`: with a
 * Gemini API key (or no auth chosen yet) they do; signed in with Google
 * (`oauth-personal`), with application default credentials
 * (`compute-default-credentials`, Cloud Shell) they go to the Code Assist
 * endpoint, and with Vertex AI to `GOOGLE_VERTEX_BASE_URL`: not to the
 * gateway.
 *
 * @param settings `security.auth.selectedType` of the settings Gemini CLI
 *   reads, nearest first (project, then user), with their files.
 * @param env The environment Gemini CLI starts in.
 * @returns The auth type and whether the base URL moves its calls.
 */
export function geminiAuth(
  settings: { file: string; selectedType: unknown }[],
  env: (name: string) => string | undefined,
): GeminiAuth {
  const on = (name: string) => env(name) === "true";
  let type: string | null = null;
  let from: string | null = null;
  if (on("GOOGLE_GENAI_USE_GCA")) {
    [type, from] = ["oauth-personal", "GOOGLE_GENAI_USE_GCA=true"];
  } else if (on("GOOGLE_GENAI_USE_VERTEXAI")) {
    [type, from] = ["vertex-ai", "GOOGLE_GENAI_USE_VERTEXAI=true"];
  } else {
    const s = settings.find((x) => typeof x.selectedType === "string");
    if (s) [type, from] = [s.selectedType as string, s.file];
  }
  return {
    type,
    from,
    follows_base_url: type === null || type === "gemini-api-key" ||
      type === "gateway",
  };
}
