/**
 * Pure edits that put the harness MCP proxy in front of a host's existing
 * MCP server entry, and take it out again.
 *
 * Where each host keeps MCP servers:
 * - host_a: `.mcp.json` (project) or `~/.claude.json` (user): `mcpServers.<name>`
 *   `{command, args, env}`;
 * - host_b: `.gemini/settings.json`: `mcpServers.<name>` `{command, args, env, cwd}`;
 * - host_c: `opencode.json`: `mcp.<name>` `{type: "local", command: [cmd, ...args], environment}`.
 *
 * Wrapping replaces the entry's command with the proxy (`… proxy.ts
 * --server <name> [--capture ID] --root <store> -- <original command>
 * <original args>`) and keeps everything else; the original entry is
 * returned so uninstall can put it back as it was.
 *
 * @module
 */

/** A config object (parsed JSON). */
export type Config = Record<string, unknown>;

/** The proxy command line to put in front. */
export interface ProxyCommand {
  /** The Deno binary. */
  command: string;
  /** Arguments up to and including `--`. */
  args: string[];
}

function servers(host: string, config: Config): Record<string, unknown> {
  const key = host === "host_c" ? "mcp" : "mcpServers";
  const v = config[key];
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new Error(
      `No "${key}" object in the config: add the MCP server first, then wrap it`,
    );
  }
  return v as Record<string, unknown>;
}

/** Which server entry to wrap, of which host, and with what. */
export interface WrapTarget {
  /** Host name (host_c keeps servers under `mcp`, the others `mcpServers`). */
  host: string;
  /** Server name. */
  name: string;
  /** The proxy command line. */
  proxy: ProxyCommand;
}

/**
 * Wrap one server entry.
 *
 * @param config The config.
 * @param target Host, server name and proxy command line.
 * @returns The new config and the original entry.
 * @throws {Error} When the entry is missing, not a local command, or already wrapped.
 */
export function wrapServerEntry(
  config: Config,
  target: WrapTarget,
): { config: Config; original: unknown } {
  const { host, name, proxy } = target;
  const out = structuredClone(config);
  const all = servers(host, out);
  const entry = all[name] as Record<string, unknown> | undefined;
  if (!entry || typeof entry !== "object") {
    throw new Error(
      `No MCP server "${name}" in the config (have: ${
        Object.keys(all).join(", ") || "none"
      })`,
    );
  }
  const original = structuredClone(entry);
  if (host === "host_c") {
    const cmd = entry.command;
    if (entry.type !== "local" || !Array.isArray(cmd) || cmd.length === 0) {
      throw new Error(
        `MCP server "${name}" is not a local command; only stdio servers can be proxied`,
      );
    }
    if (
      cmd.includes("proxy.ts") ||
      String(cmd[0]).endsWith("deno") &&
        cmd.some((c) => String(c).endsWith("proxy.ts"))
    ) {
      throw new Error(
        `MCP server "${name}" is already behind the harness proxy`,
      );
    }
    entry.command = [proxy.command, ...proxy.args, ...cmd];
  } else {
    if (typeof entry.command !== "string") {
      throw new Error(
        `MCP server "${name}" has no command; only stdio servers can be proxied`,
      );
    }
    const args = Array.isArray(entry.args) ? entry.args as string[] : [];
    if (args.some((a) => String(a).endsWith("proxy.ts"))) {
      throw new Error(
        `MCP server "${name}" is already behind the harness proxy`,
      );
    }
    entry.command = proxy.command;
    entry.args = [...proxy.args, original.command as string, ...args];
  }
  return { config: out, original };
}

/** Which server entry to put back, of which host, and as what. */
export interface UnwrapTarget {
  /** Host name. */
  host: string;
  /** Server name. */
  name: string;
  /** The entry as it was before wrapping. */
  original: unknown;
}

/**
 * Put the original entry back.
 *
 * @param config The config.
 * @param target Host, server name and the original entry.
 * @returns The new config.
 */
export function unwrapServerEntry(
  config: Config,
  target: UnwrapTarget,
): Config {
  const out = structuredClone(config);
  servers(target.host, out)[target.name] = structuredClone(target.original);
  return out;
}
