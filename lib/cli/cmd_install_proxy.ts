/**
 * `ingest.ts install|uninstall <host> --proxy NAME`: put the recording MCP
 * proxy in front of one of the host's MCP server entries, or take it out,
 * keeping the original entry (and backups) in the host's own folder.
 *
 * @module
 */
import { hostLabel } from "../trace/hosts.ts";
import { basename, join } from "node:path";
import { unwrapServerEntry, wrapServerEntry } from "../installers/mcp_wrap.ts";
import type { InstallArgs } from "./install_args.ts";
import { type Io, UsageError } from "./io.ts";
import {
  baseDir,
  opencodeUserDir,
  readText,
  sameJson,
  stamp,
} from "./_install_files.ts";

/**
 * The file that holds a host's MCP server entries.
 *
 * @param a Arguments.
 * @returns Its path.
 */
export function mcpConfigFile(a: InstallArgs): string {
  const base = baseDir(a);
  switch (a.host) {
    case "host_a":
      return a.user ? join(base, ".claude.json") : join(base, ".mcp.json");
    case "host_b":
      return join(base, ".gemini", "settings.json");
    case "host_c":
      return a.user
        ? join(opencodeUserDir(a, base), "opencode.json")
        : join(base, "opencode.json");
    default:
      throw new UsageError(
        `unknown host "${a.host}": use claude-code, gemini-cli or opencode`,
      );
  }
}

/** The host's own folder (`.claude`, `.gemini`, `.opencode` or its user equivalent). */
function hostDir(a: InstallArgs): string {
  const base = baseDir(a);
  switch (a.host) {
    case "host_a":
      return join(base, ".claude");
    case "host_b":
      return join(base, ".gemini");
    default:
      return a.user ? opencodeUserDir(a, base) : join(base, ".opencode");
  }
}

/**
 * Put the harness proxy in front of an MCP server entry (`install --proxy`),
 * or take it out (`uninstall --proxy`), keeping the original entry in
 * `<host folder>/harness-proxy-<config file>.json` (backups go there too).
 *
 * @param a Arguments (with `proxy`).
 * @param how `remove`: take it out (uninstall); `io`: output.
 * @returns Exit code.
 */
export function proxyEntry(
  a: InstallArgs,
  { remove, io }: { remove: boolean; io: Io },
): number {
  const file = mcpConfigFile(a);
  const text = readText(file);
  if (text === null) {
    throw new Error(
      `${file} does not exist: add the MCP server "${a.proxy}" to the host first`,
    );
  }
  const config = JSON.parse(text);
  // Backups and the record of wrapped entries live in the host's own folder.
  const keep = hostDir(a);
  Deno.mkdirSync(keep, { recursive: true });
  const sidecar = join(keep, `harness-proxy-${basename(file)}.json`);
  const saved = JSON.parse(readText(sidecar) ?? "{}") as Record<
    string,
    { original: unknown; before: string }
  >;
  const name = a.proxy!;
  if (remove) {
    const rec = saved[name];
    if (!rec) {
      io.out(
        `${
          hostLabel(a.host)
        }: MCP server "${name}" is not behind the harness proxy in ${file}`,
      );
      return 0;
    }
    const next = unwrapServerEntry(config, {
      host: a.host,
      name,
      original: rec.original,
    });
    const out = sameJson(rec.before, next)
      ? rec.before
      : JSON.stringify(next, null, 2) + "\n";
    Deno.writeTextFileSync(file, out);
    delete saved[name];
    if (Object.keys(saved).length) {
      Deno.writeTextFileSync(sidecar, JSON.stringify(saved, null, 2) + "\n");
    } else Deno.removeSync(sidecar);
    io.out(
      `${
        hostLabel(a.host)
      }: MCP server "${name}" in ${file} runs directly again`,
    );
    return 0;
  }
  const { config: next, original } = wrapServerEntry(config, {
    host: a.host,
    name,
    proxy: a.proxyCommand!,
  });
  Deno.writeTextFileSync(
    join(keep, `${basename(file)}.harness-backup-${stamp()}`),
    text,
  );
  Deno.writeTextFileSync(file, JSON.stringify(next, null, 2) + "\n");
  saved[name] = { original, before: text };
  Deno.writeTextFileSync(sidecar, JSON.stringify(saved, null, 2) + "\n");
  io.out(
    `${
      hostLabel(a.host)
    }: MCP server "${name}" in ${file} now runs behind the harness proxy (calls recorded as ${name}__<tool>)`,
  );
  return 0;
}
