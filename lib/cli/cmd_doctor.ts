/**
 * `ingest.ts doctor [--project DIR | --user]`: are the installed hooks of
 * each host able to record? A hook whose Deno or checkout has gone (an npx
 * cache cleared, a checkout moved) never blocks the host — it falls back to
 * the neutral answer — so it fails silently; this says so, and why.
 *
 * Where `install --gateway` sent a host's model calls to the server, it
 * also says whether model traffic arrives (the server's `/health`
 * `model_gateway` counters), and what to check when none has.
 *
 * @module
 */
import { hostLabel } from "../trace/hosts.ts";
import { join } from "node:path";
import { isHarnessEntry, type Settings } from "../installers/hook_settings.ts";
import {
  checkGatewayInstall,
  type GatewayProbe,
} from "../installers/gateway_health.ts";
import { grantedEnv } from "./env.ts";
import { exists, type Io } from "./io.ts";
import { opencodeConfigFiles, parseJsonc } from "./_install_files.ts";
import { probeHook, serverProblem, serverRequest } from "./_doctor_probe.ts";

/** One finding. */
export interface Finding {
  /** Host. */
  host: string;
  /** What was checked: the hooks (or plugin), or the model gateway. */
  check: "hooks" | "gateway";
  /** The file looked at. */
  file: string;
  /**
   * `ok`, `broken` (exit 1), `absent`, or `waiting`: the model gateway is
   * installed and the server has one, but no model request has arrived yet.
   */
  state: "ok" | "broken" | "absent" | "waiting";
  /** Why (for broken), or what was checked. */
  detail: string;
}

function read(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/**
 * The launcher and module of a hook command (shell words, quoted or not),
 * and the hook client script it runs first (`sh <client> <launcher> …`).
 */
export function commandParts(
  command: string,
): { launcher: string; module: string | null; client: string | null } {
  let words = [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replaceAll(`'\\''`, "'") : m[2]
  );
  let client: string | null = null;
  if (words[0] === "sh" && words[1]?.endsWith("hook_client.sh")) {
    client = words[1];
    words = words.slice(2);
  }
  const hookAt = words.indexOf("hook");
  return {
    launcher: words[0] ?? "",
    module: hookAt > 0 ? words[hookAt - 1] : null,
    client,
  };
}

function launcherProblem(launcher: string): string | null {
  if (launcher === "deno") {
    try {
      const ok = new Deno.Command("deno", {
        args: ["--version"],
        stdout: "null",
        stderr: "null",
      }).outputSync().success;
      return ok ? null : "`deno` on PATH does not run";
    } catch (err) {
      return err instanceof Deno.errors.NotCapable ||
          err instanceof Deno.errors.PermissionDenied
        ? null // cannot look; the shell fallback keeps the host safe
        : "`deno` is not on PATH";
    }
  }
  return exists(launcher)
    ? null
    : `the Deno it runs (${launcher}) is gone — reinstall the hooks (a cleared npx cache does this)`;
}

/** What `doctor` is told beside the folder it checks. */
export interface DoctorOptions {
  /** The folder is the user's home (user-level settings; OpenCode's folder then). */
  user?: boolean;
  /** `XDG_CONFIG_HOME` (OpenCode's user folder). */
  xdgConfigHome?: string;
  /** The token the forwarder would send (`HARNESS_INGEST_TOKEN`). */
  token?: string;
  /**
   * Reads the environment the hosts would start from (for what to check
   * when no model call has arrived).
   *
   * @default {grantedEnv}
   */
  env?: (name: string) => string | undefined;
}

/**
 * Check the hooks installed in a folder, and the model gateway where
 * `install --gateway` sent a host's model calls to the server.
 *
 * @param base The project folder (or home for `--user`).
 * @param options Whether it is the user level, the token, the environment.
 * @returns Findings, one per host for the hooks, then one per host with a gateway install.
 */
export async function checkHooks(
  base: string,
  options: DoctorOptions = {},
): Promise<Finding[]> {
  const out: Finding[] = [];
  for (
    const [host, file] of [
      ["host_a", join(base, ".claude", "settings.json")],
      ["host_b", join(base, ".gemini", "settings.json")],
    ] as const
  ) {
    out.push(await checkSettingsHooks(host, file, options.token));
  }
  out.push(await checkPlugin(base, options));
  const claude = join(base, ".claude", "settings.json");
  const gemini = join(base, ".gemini", "settings.json");
  const opencode = opencodeConfigFiles({
    user: !!options.user,
    home: base,
    project: base,
    xdgConfigHome: options.xdgConfigHome,
  });
  const probe: GatewayProbe = {
    read,
    parse: parseJsonc,
    get: (origin, path) =>
      serverRequest(origin, path, { token: options.token }),
    env: options.env ?? grantedEnv,
  };
  for (
    const g of [
      { host: "host_a", file: claude, state: `${claude}.harness-state.json` },
      { host: "host_b", file: gemini, state: `${gemini}.harness-state.json` },
      { host: "host_c", file: opencode.file, state: opencode.state },
    ] as const
  ) {
    const user = !!options.user;
    const v = await checkGatewayInstall({ ...g, base, user }, probe);
    if (v) out.push({ host: g.host, check: "gateway", file: g.file, ...v });
  }
  return out;
}

/** A hook entry of a settings file, as far as the doctor reads it. */
interface HookEntryShape {
  type: string;
  command?: string;
  url?: string;
}

/**
 * Check the harness hooks of one host's settings file.
 *
 * @param host `host_a` or `host_b`.
 * @param file The settings file.
 * @param token The token the forwarder would send.
 * @returns The host's finding.
 */
async function checkSettingsHooks(
  host: string,
  file: string,
  token: string | undefined,
): Promise<Finding> {
  const text = read(file);
  if (text === null) {
    return {
      host,
      check: "hooks",
      file,
      state: "absent",
      detail: "no settings file",
    };
  }
  let settings: Settings;
  try {
    settings = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ""));
  } catch {
    return {
      host,
      check: "hooks",
      file,
      state: "broken",
      detail: "settings are not JSON",
    };
  }
  const entries = Object.values(
    (settings.hooks ?? {}) as Record<string, { hooks?: unknown[] }[]>,
  ).flat().flatMap((g) => g.hooks ?? [])
    .filter((e) => isHarnessEntry(e, host)) as HookEntryShape[];
  if (!entries.length) {
    return {
      host,
      check: "hooks",
      file,
      state: "absent",
      detail: "no harness hooks",
    };
  }
  const problems = new Set<string>();
  for (const e of entries) {
    for (const p of await entryProblems(e, host, token)) problems.add(p);
  }
  return {
    host,
    check: "hooks",
    file,
    state: problems.size ? "broken" : "ok",
    detail: problems.size
      ? [...problems].join("; ")
      : `${entries.length} hooks can record`,
  };
}

/**
 * What stops one hook entry from recording.
 *
 * @param e The entry.
 * @param host Its host.
 * @param token The token the forwarder would send.
 * @returns Problems, in the order found.
 */
async function entryProblems(
  e: HookEntryShape,
  host: string,
  token: string | undefined,
): Promise<string[]> {
  const problems: string[] = [];
  if (e.type === "command" && e.command) {
    const { launcher, module, client } = commandParts(e.command);
    const l = launcherProblem(launcher);
    if (l) problems.push(l);
    if (client && !exists(client)) {
      problems.push(
        `the hook client it runs (${client}) is gone — reinstall from the checkout`,
      );
    }
    if (module && !exists(module)) {
      problems.push(
        `the checkout it runs (${module}) is gone — reinstall from the checkout`,
      );
    }
    const url = /--url '([^']+)'/.exec(e.command)?.[1] ??
      "http://127.0.0.1:8848";
    const capture = /--capture '([^']+)'/.exec(e.command)?.[1];
    const s = await serverProblem(url) ??
      await probeHook({ host, url, capture, token });
    if (s) problems.push(s);
  }
  if (e.type === "http" && e.url) {
    // A native http hook sends no token.
    const s = await serverProblem(e.url) ??
      await probeHook({ host, url: e.url });
    if (s) problems.push(s);
  }
  return problems;
}

/**
 * Check OpenCode's plugin.
 *
 * @param base The project folder (or home for `--user`).
 * @param options Whether it is the user level, and its config folder.
 * @returns The `host_c` finding.
 */
async function checkPlugin(
  base: string,
  options: DoctorOptions,
): Promise<Finding> {
  const plugin = options.user
    ? join(
      options.xdgConfigHome ?? join(base, ".config"),
      "opencode",
      "plugin",
      "harness.js",
    )
    : join(base, ".opencode", "plugin", "harness.js");
  const source = read(plugin);
  if (source === null) {
    return {
      host: "host_c",
      check: "hooks",
      file: plugin,
      state: "absent",
      detail: "no plugin",
    };
  }
  const url = /const DEFAULT_URL = "([^"]+)"/.exec(source)?.[1] ??
    "http://127.0.0.1:8848";
  const s = await serverProblem(url);
  return {
    host: "host_c",
    check: "hooks",
    file: plugin,
    state: s ? "broken" : "ok",
    detail: s ?? "the plugin can record",
  };
}

/**
 * Print the findings.
 *
 * @param o `findings`: what the checks found; `json`: JSON output.
 * @param io Output.
 * @returns 1 when any hook is broken, else 0.
 */
export function printFindings(
  o: { findings: Finding[]; json: boolean },
  io: Io,
): number {
  const { findings, json } = o;
  if (json) io.out(JSON.stringify(findings, null, 2));
  else {
    for (const f of findings) {
      // The hosts by the names users know (the JSON keeps host_a|b|c).
      const host = hostLabel(f.host);
      io.out(
        `${host.padEnd(11)} ${f.state.padEnd(7)} ${f.detail} (${f.file})`,
      );
    }
  }
  return findings.some((f) => f.state === "broken") ? 1 : 0;
}
