/**
 * `ingest.ts doctor [--project DIR | --user]`: are the installed hooks of
 * each host able to record? A hook whose Deno or checkout has gone (an npx
 * cache cleared, a checkout moved) never blocks the host — it falls back to
 * the neutral answer — so it fails silently; this says so, and why.
 *
 * @module
 */
import { join } from "node:path";
import { isHarnessEntry, type Settings } from "../installers/hook_settings.ts";
import { exists, type Io } from "./io.ts";

/** One finding. */
export interface Finding {
  /** Host. */
  host: string;
  /** The file looked at. */
  file: string;
  /** `ok`, `broken` or `absent`. */
  state: "ok" | "broken" | "absent";
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

/** The launcher and module of a hook command (shell words, quoted or not). */
export function commandParts(
  command: string,
): { launcher: string; module: string | null } {
  const words = [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replaceAll(`'\\''`, "'") : m[2]
  );
  const hookAt = words.indexOf("hook");
  return {
    launcher: words[0] ?? "",
    module: hookAt > 0 ? words[hookAt - 1] : null,
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

async function serverProblem(url: string): Promise<string | null> {
  try {
    const base = new URL(url);
    const ctl = new AbortController();
    const t = setTimeout(() => ctl.abort(), 1000);
    try {
      const res = await fetch(`${base.origin}/health`, { signal: ctl.signal });
      await res.body?.cancel();
      return null;
    } finally {
      clearTimeout(t);
    }
  } catch {
    return `no ingest server answers at ${url} ("ingest.ts serve")`;
  }
}

/**
 * Check the hooks installed in a folder.
 *
 * @param base The project folder (or home for `--user`).
 * @param options Whether it is the user level (OpenCode's folder then).
 * @returns Findings, one per host.
 */
export async function checkHooks(
  base: string,
  options: { user?: boolean; xdgConfigHome?: string } = {},
): Promise<Finding[]> {
  const out: Finding[] = [];
  for (
    const [host, file] of [
      ["host_a", join(base, ".claude", "settings.json")],
      ["host_b", join(base, ".gemini", "settings.json")],
    ] as const
  ) {
    const text = read(file);
    if (text === null) {
      out.push({ host, file, state: "absent", detail: "no settings file" });
      continue;
    }
    let settings: Settings;
    try {
      settings = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ""));
    } catch {
      out.push({
        host,
        file,
        state: "broken",
        detail: "settings are not JSON",
      });
      continue;
    }
    const entries = Object.values(
      (settings.hooks ?? {}) as Record<string, { hooks?: unknown[] }[]>,
    ).flat().flatMap((g) => g.hooks ?? [])
      .filter((e) => isHarnessEntry(e, host)) as {
        type: string;
        command?: string;
        url?: string;
      }[];
    if (!entries.length) {
      out.push({ host, file, state: "absent", detail: "no harness hooks" });
      continue;
    }
    const problems = new Set<string>();
    for (const e of entries) {
      if (e.type === "command" && e.command) {
        const { launcher, module } = commandParts(e.command);
        const l = launcherProblem(launcher);
        if (l) problems.add(l);
        if (module && !exists(module)) {
          problems.add(
            `the checkout it runs (${module}) is gone — reinstall from the checkout`,
          );
        }
        const url = /--url '([^']+)'/.exec(e.command)?.[1] ??
          "http://127.0.0.1:8848";
        const s = await serverProblem(url);
        if (s) problems.add(s);
      }
      if (e.type === "http" && e.url) {
        const s = await serverProblem(e.url);
        if (s) problems.add(s);
      }
    }
    out.push({
      host,
      file,
      state: problems.size ? "broken" : "ok",
      detail: problems.size
        ? [...problems].join("; ")
        : `${entries.length} hooks can record`,
    });
  }
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
    out.push({
      host: "host_c",
      file: plugin,
      state: "absent",
      detail: "no plugin",
    });
  } else {
    const url = /const DEFAULT_URL = "([^"]+)"/.exec(source)?.[1] ??
      "http://127.0.0.1:8848";
    const s = await serverProblem(url);
    out.push({
      host: "host_c",
      file: plugin,
      state: s ? "broken" : "ok",
      detail: s ?? "the plugin can record",
    });
  }
  return out;
}

/**
 * Print the findings.
 *
 * @param findings Findings.
 * @param json JSON output.
 * @param io Output.
 * @returns 1 when any hook is broken, else 0.
 */
export function printFindings(
  findings: Finding[],
  json: boolean,
  io: Io,
): number {
  if (json) io.out(JSON.stringify(findings, null, 2));
  else {
    for (const f of findings) {
      io.out(
        `${f.host.padEnd(7)} ${f.state.padEnd(7)} ${f.detail} (${f.file})`,
      );
    }
  }
  return findings.some((f) => f.state === "broken") ? 1 : 0;
}
