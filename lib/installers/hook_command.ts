/**
 * The command line a host runs for a command hook. It must never block or
 * warn in the host: whatever is missing (Deno, the checkout, the server),
 * it exits 0 with the host's neutral answer. So the forwarder runs under a
 * shell-level fallback (`… 2>/dev/null || printf '{}\n'`), every path is
 * quoted for the shell (spaces included), and the pinned capture and URL
 * travel as flags.
 *
 * With a `client` (the checkout's `lib/forwarder/hook_client.sh`), the
 * command is `sh <client> <the forwarder's command line>`: the client posts
 * the payload with curl (a few milliseconds instead of a Deno start, see
 * `deno task bench hooks`) and runs the forwarder itself where curl is
 * missing or a capture id from the environment needs encoding.
 *
 * host_a's command may read files (the session transcript its payload
 * names, read at Stop, StopFailure, SubagentStop, PreCompact and SessionEnd
 * for tokens and the
 * assistant's text) and write the forwarder's offset directory.
 *
 * @module
 */
import { DEFAULT_TRANSCRIPT_STATE_DIR } from "../forwarder/transcript.ts";

/** Quote a word for a POSIX shell. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** What a hook command is made of. */
export interface HookCommandParts {
  /** The Deno to run (`deno` on PATH, or an absolute path). */
  launcher: string;
  /** Absolute path of ingest.ts. */
  module: string;
  /** Host name. */
  host: string;
  /** Ingest URL (passed only when not the default). */
  url: string;
  /** The default ingest URL. */
  defaultUrl: string;
  /** Capture pinned at install. */
  capture?: string | null;
  /** Environment variables the forwarder may read. */
  env: readonly string[];
  /** The host's neutral answer on stdout (`{}` for host_b, empty for the others). */
  answer: string;
  /**
   * host_a: the directory of the forwarder's transcript offset files; the
   * command may read (the transcript the host names) and write there.
   * @default DEFAULT_TRANSCRIPT_STATE_DIR
   */
  stateDir?: string;
  /**
   * The hook client script (`lib/forwarder/hook_client.sh`) to run the
   * forwarder's command line through; without it the command runs the
   * forwarder directly.
   */
  client?: string;
}

/** Where the hook client lives, relative to `ingest.ts`. */
export const HOOK_CLIENT_PATH = "lib/forwarder/hook_client.sh";

/**
 * Build the command line.
 *
 * @param p Its parts.
 * @returns The command, for `bash -c`.
 *
 * @example
 * ```ts
 * import { hookCommand } from "./hook_command.ts";
 * import { ok } from "node:assert/strict";
 * const cmd = hookCommand({
 *   launcher: "/opt/deno", module: "/home/me/my checkout/ingest.ts", host: "host_b",
 *   url: "http://127.0.0.1:8848", defaultUrl: "http://127.0.0.1:8848",
 *   capture: "run_1", env: ["HARNESS_INGEST_URL"], answer: "{}",
 * });
 * ok(cmd.includes("'/home/me/my checkout/ingest.ts' hook host_b --capture 'run_1'"));
 * ok(cmd.endsWith("2>/dev/null || printf '%s\\n' '{}'"));
 * const fast = hookCommand({
 *   launcher: "deno", module: "/src/ingest.ts", host: "host_b",
 *   url: "http://127.0.0.1:8848", defaultUrl: "http://127.0.0.1:8848",
 *   env: ["HARNESS_INGEST_URL"], answer: "{}",
 *   client: "/src/lib/forwarder/hook_client.sh",
 * });
 * ok(fast.startsWith("sh '/src/lib/forwarder/hook_client.sh' deno run "));
 * ```
 */
export function hookCommand(p: HookCommandParts): string {
  let netHost = "127.0.0.1";
  try {
    netHost = new URL(p.url).host;
  } catch { /* keep the default */ }
  const launcher = p.launcher === "deno" ? "deno" : shellQuote(p.launcher);
  const run = [
    launcher,
    "run --quiet --no-prompt --no-config",
    `--allow-net=${netHost}`,
    `--allow-env=${p.env.join(",")}`,
    ...(p.host === "host_a"
      ? [
        "--allow-read",
        `--allow-write=${
          shellQuote(p.stateDir ?? DEFAULT_TRANSCRIPT_STATE_DIR)
        }`,
      ]
      : []),
    shellQuote(p.module),
    `hook ${p.host}`,
    ...(p.url !== p.defaultUrl ? [`--url ${shellQuote(p.url)}`] : []),
    ...(p.capture ? [`--capture ${shellQuote(p.capture)}`] : []),
  ].join(" ");
  const fallback = p.answer ? `printf '%s\\n' ${shellQuote(p.answer)}` : "true";
  const client = p.client ? `sh ${shellQuote(p.client)} ` : "";
  return `${client}${run} 2>/dev/null || ${fallback}`;
}

/**
 * Whether a path lies in a package manager's cache (npx's `_npx`, `.npm`,
 * `.cache`): a Deno there goes away when the cache is cleared, and the
 * `deno` npx puts on PATH exists only while npx runs.
 *
 * @param path An executable's absolute path.
 * @returns `true` for a cached path.
 *
 * @example
 * ```ts
 * import { inPackageCache } from "./hook_command.ts";
 * import { equal } from "node:assert/strict";
 * equal(inPackageCache("/root/.npm/_npx/7a40/node_modules/deno/deno"), true);
 * equal(inPackageCache("/usr/local/lib/node_modules/deno/deno"), false);
 * ```
 */
export function inPackageCache(path: string): boolean {
  return /[\\/](_npx|\.npm|npx|\.cache)[\\/]/.test(path);
}

/**
 * How to tell a user to run Deno again from their shell: `deno` when this
 * Deno is installed somewhere stable (so it is on their PATH), else the
 * npx command that started it (a Node-only Quick Start has no `deno`).
 *
 * @param execPath This process's executable (`Deno.execPath()`).
 * @param version This Deno's version (`Deno.version.deno`).
 * @returns `deno` or `npx -y deno@VERSION`.
 *
 * @example
 * ```ts
 * import { shellLauncher } from "./hook_command.ts";
 * import { equal } from "node:assert/strict";
 * equal(shellLauncher("/root/.npm/_npx/7a40/node_modules/deno/deno", "2.9.6"), "npx -y deno@2.9.6");
 * equal(shellLauncher("/root/.deno/bin/deno", "2.9.6"), "deno");
 * ```
 */
export function shellLauncher(execPath: string, version: string): string {
  return inPackageCache(execPath) ? `npx -y deno@${version}` : "deno";
}

/**
 * The Deno to put in hook commands: `deno` when the one on PATH is this
 * very version and lives outside a package cache (it survives the npx
 * cache being cleared; under npx, PATH's `deno` is npx's own), else this
 * process's own executable (the caller warns when that one is cached).
 * Without permission to run `deno`, the latter.
 *
 * @returns `deno` or an absolute path.
 */
export function stableLauncher(): string {
  try {
    const out = new Deno.Command("deno", {
      args: [
        "eval",
        "--quiet",
        "--no-config",
        "--no-lock",
        "console.log(Deno.version.deno + ' ' + Deno.execPath())",
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const line = new TextDecoder().decode(out.stdout).trim();
    const space = line.indexOf(" ");
    const version = line.slice(0, space);
    const path = line.slice(space + 1);
    if (
      out.success && space > 0 && version === Deno.version.deno &&
      !inPackageCache(path)
    ) return "deno";
  } catch { /* not on PATH, or not allowed to look */ }
  return Deno.execPath();
}
