/**
 * `ingest.ts install|uninstall host_a|host_b|host_c [--project DIR | --user]`:
 * writes (or removes) the hook configuration each real host reads.
 *
 * - host_a: `<dir>/.claude/settings.json` — native `http` hooks to
 *   `<url>/hook/host_a` (2 s time-out), SessionStart as a command hook (the
 *   host sends it to command hooks only); `--command` uses the forwarder
 *   everywhere.
 * - host_b: `<dir>/.gemini/settings.json` — command hooks running the
 *   forwarder (2,000 ms time-out).
 * - host_c: `<dir>/.opencode/plugin/harness.js` — the capture plugin.
 *
 * Existing settings are merged, never replaced; a changed file is first
 * copied to `<file>.harness-backup-<time>`; installing twice changes
 * nothing; `uninstall` removes exactly the harness entries (and the file or
 * `hooks` key when the install created them, recorded in
 * `<file>.harness-state.json`).
 *
 * @module
 */
import { commandParts } from "./cmd_doctor.ts";
import { basename, dirname, join } from "node:path";
import { hostCPluginSource } from "../adapters/host_c_plugin.ts";
import {
  addHarnessHooks,
  hostAPlan,
  hostBPlan,
  removeHarnessHooks,
  type Settings,
} from "../installers/hook_settings.ts";
import { exists, type Io, UsageError } from "./io.ts";
import {
  baseDir,
  opencodeUserDir,
  parseJsonc,
  readText,
  sameJson,
  stamp,
} from "./_install_files.ts";

/** Arguments of install and uninstall. */
export interface InstallArgs {
  /** Host to configure. */
  host: string;
  /** Project directory (default: current directory), unless `user`. */
  project?: string;
  /** Configure the user-level settings instead. */
  user: boolean;
  /** host_a: `http` hooks (default) or `command` hooks everywhere. */
  mode: "http" | "command";
  /** Ingest URL the hooks post to. */
  url: string;
  /** Pin a capture id (`?cap=`); otherwise the server's active capture. */
  capture?: string;
  /** The server takes a bearer token: host_a then uses command hooks (the forwarder sends it). */
  token?: boolean;
  /** Forwarder command line for command hooks (`… ingest.ts hook <host>`). */
  forwarderCommand: string;
  /** Home directory (for `--user`). */
  home?: string;
  /** `XDG_CONFIG_HOME` (host_c `--user`). */
  xdgConfigHome?: string;
  /** Wrap this MCP server entry with the harness proxy instead of installing hooks. */
  proxy?: string;
  /** The proxy command line (`deno run … proxy.ts … --`), for `proxy`. */
  proxyCommand?: { command: string; args: string[] };
}

/** Marker line at the top of the host_c plugin file. */
const PLUGIN_MARKER = "// harness: capture plugin for OpenCode";

/**
 * The file install writes for a host.
 *
 * @param a Arguments.
 * @returns Absolute or relative path.
 */
export function targetFile(a: InstallArgs): string {
  const base = baseDir(a);
  switch (a.host) {
    case "host_a":
      return join(base, ".claude", "settings.json");
    case "host_b":
      return join(base, ".gemini", "settings.json");
    case "host_c":
      return a.user
        ? join(opencodeUserDir(a, base), "plugin", "harness.js")
        : join(base, ".opencode", "plugin", "harness.js");
    default:
      throw new UsageError(
        `unknown host "${a.host}": use host_a, host_b or host_c`,
      );
  }
}

function firstBackup(file: string): string | null {
  const dir = dirname(file);
  const prefix = `${file.slice(dir.length + 1)}.harness-backup-`;
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(dir)].map((e) => e.name)
      .filter((n) => n.startsWith(prefix)).sort();
  } catch {
    return null;
  }
  return names.length ? readText(join(dir, names[0])) : null;
}

function hookUrl(a: InstallArgs): string {
  const base = a.url.replace(/\/+$/, "");
  return `${base}/hook/${a.host}` +
    (a.capture ? `?cap=${encodeURIComponent(a.capture)}` : "");
}

/**
 * Install the harness hooks for a host.
 *
 * @param a Arguments.
 * @param io Output.
 * @returns Exit code.
 */
export function install(a: InstallArgs, io: Io): number {
  const file = targetFile(a);
  warnUnstableLauncher(a.forwarderCommand, io);
  const before = readText(file);
  if (a.host === "host_c") return installPlugin(a, file, before, io);
  const settings = readSettings(a.host, file, before, io);
  // host_a blanks credential-like variables in http hook headers, so with
  // a token every event goes through the forwarder, which sends it.
  const mode = a.token && a.mode === "http" ? "command" : a.mode;
  if (mode !== a.mode) {
    io.out(
      "host_a: HARNESS_INGEST_TOKEN is set, so the hooks run the forwarder (it sends the token)",
    );
  }
  const plan = a.host === "host_a"
    ? hostAPlan({
      hookUrl: hookUrl(a),
      command: a.forwarderCommand,
      mode,
    })
    : hostBPlan({ command: a.forwarderCommand });
  const next = addHarnessHooks(settings, plan);
  const text = JSON.stringify(next, null, 2) + "\n";
  if (text === before) {
    io.out(`${a.host}: ${file} already has the harness hooks`);
    return 0;
  }
  const statePath = `${file}.harness-state.json`;
  if (readText(statePath) === null) {
    const createdDir = !exists(dirname(file));
    Deno.mkdirSync(dirname(file), { recursive: true });
    Deno.writeTextFileSync(
      statePath,
      JSON.stringify({
        created_file: before === null,
        created_dir: createdDir,
        had_hooks_key: settings.hooks !== undefined,
      }) + "\n",
    );
  }
  if (before !== null) {
    const backup = `${file}.harness-backup-${stamp()}`;
    Deno.writeTextFileSync(backup, before);
    io.out(`${a.host}: backed up ${file} to ${backup}`);
  }
  Deno.writeTextFileSync(file, text);
  io.out(
    `${a.host}: installed ${plan.events.length} hooks in ${file} (posting to ${a.url}${
      a.capture ? `, capture ${a.capture}` : ", the active capture"
    })`,
  );
  if (a.host === "host_b") {
    io.out(
      "host_b runs hooks only in trusted folders: trust this folder in the host",
    );
  }
  return 0;
}

/** host_c: write the capture plugin (unless another file is there). */
function installPlugin(
  a: InstallArgs,
  file: string,
  before: string | null,
  io: Io,
): number {
  if (before !== null && !before.startsWith(PLUGIN_MARKER)) {
    throw new Error(
      `${file} exists and is not the harness plugin; move it away first`,
    );
  }
  const source = hostCPluginSource({ url: a.url, capture: a.capture });
  if (before === source) {
    io.out(`host_c: ${file} is already installed`);
    return 0;
  }
  Deno.mkdirSync(dirname(file), { recursive: true });
  Deno.writeTextFileSync(file, source);
  io.out(`host_c: wrote the capture plugin ${file} (posts to ${a.url})`);
  return 0;
}

/** The host's settings as they are (comments allowed; they are not kept). */
function readSettings(
  host: string,
  file: string,
  before: string | null,
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

/**
 * Remove exactly the harness hooks for a host.
 *
 * @param a Arguments.
 * @param io Output.
 * @returns Exit code.
 */
export function uninstall(a: InstallArgs, io: Io): number {
  const file = targetFile(a);
  const before = readText(file);
  if (before === null) {
    io.out(`${a.host}: nothing to remove (${file} does not exist)`);
    return 0;
  }
  if (a.host === "host_c") {
    if (!before.startsWith(PLUGIN_MARKER)) {
      throw new Error(`${file} is not the harness plugin; not removing it`);
    }
    Deno.removeSync(file);
    io.out(`host_c: removed ${file}`);
    return 0;
  }
  const statePath = `${file}.harness-state.json`;
  const stateText = readText(statePath);
  const state = stateText
    ? JSON.parse(stateText) as {
      created_file: boolean;
      created_dir?: boolean;
      had_hooks_key: boolean;
    }
    : { created_file: false, created_dir: false, had_hooks_key: true };
  const settings = parseJsonc(before) as Settings;
  const next = removeHarnessHooks(settings, a.host, state.had_hooks_key);
  if (state.created_file && Object.keys(next).length === 0) {
    Deno.removeSync(file);
    io.out(`${a.host}: removed ${file} (the install had created it)`);
  } else {
    // Give back the user's own bytes when the result equals the settings
    // as they were before the first install.
    const original = firstBackup(file);
    const text = original !== null && sameJson(original, next)
      ? original
      : JSON.stringify(next, null, 2) + "\n";
    if (text !== before) {
      Deno.writeTextFileSync(file, text);
      io.out(`${a.host}: removed the harness hooks from ${file}`);
    } else io.out(`${a.host}: no harness hooks in ${file}`);
  }
  if (stateText !== null) Deno.removeSync(statePath);
  // What install made goes too: its backups, and the folder it created.
  for (const b of backupsOf(file)) Deno.removeSync(b);
  if (state.created_dir) {
    try {
      Deno.removeSync(dirname(file)); // only when empty
      io.out(
        `${a.host}: removed ${dirname(file)} (the install had created it)`,
      );
    } catch { /* the folder holds other files: keep it */ }
  }
  return 0;
}

function backupsOf(file: string): string[] {
  const dir = dirname(file);
  const prefix = `${basename(file)}.harness-backup-`;
  try {
    return [...Deno.readDirSync(dir)].filter((e) => e.name.startsWith(prefix))
      .map((e) => join(dir, e.name));
  } catch {
    return [];
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

/**
 * Say so when the hooks would run a Deno from a package cache (npx, npm's
 * `_npx` or `.cache`): it goes away when the cache is cleared, and the
 * hooks then record nothing (fail open).
 *
 * @param command The forwarder command written into the hooks.
 * @param io Output (the warning goes to stderr).
 * @returns Whether a warning was given.
 */
export function warnUnstableLauncher(command: string, io: Io): boolean {
  const launcher = commandParts(command).launcher;
  if (
    launcher === "deno" || !/[\\/](_npx|\.npm|npx|\.cache)[\\/]/.test(launcher)
  ) {
    return false;
  }
  io.err(
    `harness: warning: "deno" is not on PATH, so the hooks run ${launcher}, a Deno in a package cache: clearing that cache breaks them silently. Install a stable Deno (https://deno.com: curl -fsSL https://deno.land/install.sh | sh), put it on PATH and install again; "ingest.ts doctor" checks the hooks`,
  );
  return true;
}
