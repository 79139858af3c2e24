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

/**
 * Wrap one server entry.
 *
 * @param host Host name.
 * @param config The config.
 * @param name Server name.
 * @param proxy The proxy command line.
 * @returns The new config and the original entry.
 * @throws {Error} When the entry is missing, not a local command, or already wrapped.
 */
export function wrapServerEntry(
  host: string,
  config: Config,
  name: string,
  proxy: ProxyCommand,
): { config: Config; original: unknown } {
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

/**
 * Put the original entry back.
 *
 * @param host Host name.
 * @param config The config.
 * @param name Server name.
 * @param original The entry as it was before wrapping.
 * @returns The new config.
 */
export function unwrapServerEntry(
  host: string,
  config: Config,
  name: string,
  original: unknown,
): Config {
  const out = structuredClone(config);
  servers(host, out)[name] = structuredClone(original);
  return out;
}
