/**
 * `ingest.ts install|uninstall host_a|host_b|host_c [--project DIR | --user]`:
 * writes (or removes) the hook configuration each real host reads.
 *
 * - host_a: `<dir>/.claude/settings.json` — native `http` hooks to
 *   `<url>/hook/host_a` (1 s time-out), SessionStart as a command hook
 *   running the hook client (the host sends it to command hooks only), the
 *   transcript events (Stop, StopFailure, SubagentStop, PreCompact,
 *   SessionEnd) running the Deno forwarder (10 s); `--command` uses command
 *   hooks everywhere.
 * - host_b: `<dir>/.gemini/settings.json` — command hooks running the hook
 *   client (`lib/forwarder/hook_client.sh`: curl, else the forwarder;
 *   10,000 ms time-out). The time-outs' rule is in
 *   `lib/installers/hook_settings.ts`.
 * - host_c: `<dir>/.opencode/plugin/harness.js` — the capture plugin.
 *
 * `--gateway` also points the host's model base URL at the server's model
 * gateway (`lib/installers/gateway_settings.ts`): `env.ANTHROPIC_BASE_URL`
 * in host_a's settings, `GOOGLE_GEMINI_BASE_URL` in the env file Gemini CLI
 * reads for the project (`lib/installers/gemini_env.ts`; its hooks then
 * leave the model's side to the gateway), the `anthropic` and `openai`
 * providers' `options.baseURL` in `<dir>/opencode.json` (its state and
 * backups kept in `.opencode/`); `--capture` pins the capture by header. What was there before is recorded, and `uninstall` (with or
 * without `--gateway`: a base URL left pointing at a stopped server would
 * cut the host off its model) puts it back; installing again without
 * `--gateway` takes it out.
 *
 * Existing settings are merged, never replaced; a changed file is first
 * copied to `<file>.harness-backup-<time>`; installing twice changes
 * nothing; `uninstall` removes exactly the harness entries (and the file or
 * `hooks` key when the install created them, recorded in
 * `<file>.harness-state.json`).
 *
 * @module
 */
import { hostLabel } from "../trace/hosts.ts";
import { commandParts } from "./cmd_doctor.ts";
import { basename, dirname, join } from "node:path";
import { hostCPluginSource } from "../installers/host_c_plugin.ts";
import type { GatewayRecord } from "../installers/gateway_settings.ts";
import {
  addHarnessHooks,
  hostAPlan,
  hostBPlan,
  removeHarnessHooks,
  type Settings,
} from "../installers/hook_settings.ts";
import { exists, type Io, UsageError } from "./io.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";
import {
  baseDir,
  freshBackupPath,
  opencodeUserDir,
  parseJsonc,
  readSettings,
  readText,
  sameJson,
} from "./_install_files.ts";
import {
  checkGatewayHost,
  gatewayEdit,
  gatewayNotes,
  gatewayPlan,
  type GeminiEnvState,
  geminiGateway,
  opencodeGateway,
  recordOf,
} from "./_install_gateway.ts";
import type { InstallArgs } from "./install_args.ts";

/** What install records beside host_a and host_b settings (`<file>.harness-state.json`). */
interface SettingsState {
  /** The install created the settings file. */
  created_file: boolean;
  /** The install created its folder. */
  created_dir?: boolean;
  /** The settings had a `hooks` key before. */
  had_hooks_key: boolean;
  /** What `--gateway` changed, while it is installed. */
  gateway?: GatewayRecord;
  /** host_b: the env file `--gateway` edited (its record is `gateway`). */
  gemini_env?: GeminiEnvState;
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
        `unknown host "${a.host}": use claude-code, gemini-cli or opencode`,
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
 * Install the harness hooks for a host (and with `gateway`, point its
 * model base URL at the server).
 *
 * @param a Arguments.
 * @param io Output.
 * @returns Exit code.
 * @throws {Error} When the settings are not JSON, or (`gateway`) already send model calls to another base URL; nothing is changed then.
 */
export function install(a: InstallArgs, io: Io): number {
  checkGatewayHost(a);
  const file = targetFile(a);
  warnUnstableLauncher(a.forwarderCommand, io);
  const before = readText(file);
  if (a.host === "host_c") {
    if (before !== null && !before.startsWith(PLUGIN_MARKER)) {
      throw new Error(
        `${file} exists and is not the harness plugin; move it away first`,
      );
    }
    const gateway = opencodeGateway(a, { remove: false, io }); // refuses before writing
    installPlugin(a, file, before, io);
    gateway?.();
    return 0;
  }
  const settings = readSettings({ host: a.host, file, before }, io);
  const statePath = `${file}.harness-state.json`;
  const stateText = readText(statePath);
  const state: SettingsState = stateText ? JSON.parse(stateText) : {
    created_file: before === null,
    created_dir: !exists(dirname(file)),
    had_hooks_key: settings.hooks !== undefined,
  };
  // Gemini CLI's base URL is in its env file, not in settings.json.
  const gemini = a.host === "host_b"
    ? geminiGateway(a, { where: state.gemini_env, remove: false, io })
    : null;
  const gw = gemini
    ? { settings, kept: [], record: undefined }
    : gatewayEdit(a, {
      file,
      settings,
      record: state.gateway,
      apply: !!a.gateway,
    });
  const gwRecord = gemini ? gemini.record : gw.record;
  // host_a blanks credential-like variables in http hook headers, so with
  // a token every event goes through the forwarder, which sends it.
  const mode = a.token && a.mode === "http" ? "command" : a.mode;
  if (mode !== a.mode) {
    io.out(
      "claude-code: HARNESS_INGEST_TOKEN is set, so the hooks run the forwarder (it sends the token)",
    );
  }
  const command = a.clientCommand ?? a.forwarderCommand;
  const plan = a.host === "host_a"
    ? hostAPlan({
      hookUrl: hookUrl(a),
      command,
      transcriptCommand: a.forwarderCommand,
      mode,
      // With the model gateway, a turn end reads no transcript.
      transcript: !a.gateway,
    })
    : hostBPlan({ command, model: !a.gateway });
  const next = addHarnessHooks(gw.settings, plan);
  const text = JSON.stringify(next, null, 2) + "\n";
  const { gateway: _, gemini_env: _env, ...rest } = state;
  const stateOut = JSON.stringify(
    gwRecord
      ? {
        ...rest,
        gateway: gwRecord,
        ...(gemini?.where ? { gemini_env: gemini.where } : {}),
      }
      : rest,
  ) + "\n";
  if (text === before && (stateText ?? stateOut) === stateOut) {
    io.out(`${hostLabel(a.host)}: ${file} already has the harness hooks`);
    gemini?.write();
    return 0;
  }
  Deno.mkdirSync(dirname(file), { recursive: true });
  Deno.writeTextFileSync(statePath, stateOut);
  if (before !== null && text !== before) {
    const backup = freshBackupPath(`${file}.harness-backup-`);
    Deno.writeTextFileSync(backup, before);
    io.out(`${hostLabel(a.host)}: backed up ${file} to ${backup}`);
  }
  Deno.writeTextFileSync(file, text);
  io.out(
    `${
      hostLabel(a.host)
    }: installed ${plan.events.length} hooks in ${file} (posting to ${
      maskUrlCredentials(a.url)
    }${a.capture ? `, capture ${a.capture}` : ", the active capture"})`,
  );
  if (gemini) gemini.write();
  else {
    gatewayNotes({ args: a, file, change: gw, earlier: state.gateway }, io);
  }
  if (a.host === "host_b") {
    io.out(
      "gemini-cli runs hooks only in trusted folders: trust this folder in the host",
    );
  }
  return 0;
}

/** host_c: write the capture plugin (the caller checked no other file is there). */
function installPlugin(
  a: InstallArgs,
  file: string,
  before: string | null,
  io: Io,
): void {
  const source = hostCPluginSource({ url: a.url, capture: a.capture });
  if (before === source) {
    io.out(`opencode: ${file} is already installed`);
    return;
  }
  Deno.mkdirSync(dirname(file), { recursive: true });
  Deno.writeTextFileSync(file, source);
  io.out(
    `opencode: wrote the capture plugin ${file} (posts to ${
      maskUrlCredentials(a.url)
    })`,
  );
}

/**
 * Remove exactly the harness hooks for a host, and the model gateway
 * settings a gateway install made (whether or not `gateway` is given: a
 * base URL left pointing at a stopped server cuts the host off its model).
 *
 * @param a Arguments.
 * @param io Output.
 * @returns Exit code.
 * @throws {Error} When the host_c plugin file is not the harness plugin.
 */
export function uninstall(a: InstallArgs, io: Io): number {
  checkGatewayHost(a);
  const file = targetFile(a);
  const before = readText(file);
  if (a.host === "host_c") {
    if (before !== null && !before.startsWith(PLUGIN_MARKER)) {
      throw new Error(`${file} is not the harness plugin; not removing it`);
    }
    const gateway = opencodeGateway(a, { remove: true, io });
    if (before === null) {
      io.out(`opencode: no plugin to remove (${file} does not exist)`);
    } else {
      Deno.removeSync(file);
      io.out(`opencode: removed ${file}`);
    }
    gateway?.();
    return 0;
  }
  if (before === null) {
    io.out(`${hostLabel(a.host)}: nothing to remove (${file} does not exist)`);
    return 0;
  }
  const statePath = `${file}.harness-state.json`;
  const stateText = readText(statePath);
  const state: SettingsState = stateText
    ? JSON.parse(stateText)
    : { created_file: false, created_dir: false, had_hooks_key: true };
  const settings = parseJsonc(before) as Settings;
  const gemini = a.host === "host_b"
    ? geminiGateway(a, { where: state.gemini_env, remove: true, io })
    : null;
  // host_b's gateway is in its env file (taken out by `gemini`).
  const record = gemini ? undefined : state.gateway ??
    (a.gateway ? recordOf(gatewayPlan(a, settings)) : undefined);
  const gw = gemini
    ? { settings, kept: [], record: undefined }
    : gatewayEdit(a, { file, settings, record, apply: false });
  const next = removeHarnessHooks(gw.settings, a.host, state.had_hooks_key);
  if (state.created_file && Object.keys(next).length === 0) {
    Deno.removeSync(file);
    io.out(
      `${hostLabel(a.host)}: removed ${file} (the install had created it)`,
    );
  } else {
    // Give back the user's own bytes when the result equals the settings
    // as they were before the first install.
    const original = firstBackup(file);
    const text = original !== null && sameJson(original, next)
      ? original
      : JSON.stringify(next, null, 2) + "\n";
    if (text !== before) {
      Deno.writeTextFileSync(file, text);
      io.out(
        `${hostLabel(a.host)}: removed the harness hooks${
          record ? " and the model gateway settings" : ""
        } from ${file}`,
      );
    } else io.out(`${hostLabel(a.host)}: no harness hooks in ${file}`);
  }
  if (gemini) gemini.write();
  else gatewayNotes({ args: a, file, change: gw }, io);
  if (stateText !== null) Deno.removeSync(statePath);
  // What install made goes too: its backups, and the folder it created.
  for (const b of backupsOf(file)) Deno.removeSync(b);
  if (state.created_dir) {
    try {
      Deno.removeSync(dirname(file)); // only when empty
      io.out(
        `${hostLabel(a.host)}: removed ${
          dirname(file)
        } (the install had created it)`,
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
