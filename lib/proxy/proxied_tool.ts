/**
 * {@linkcode ProxiedTool}: an upstream tool as the proxy exposes it, and the
 * namespacing of its name.
 *
 * Namespaced name: `<server>__<tool>`, with characters outside MCP's
 * tool-name set (`A-Z a-z 0-9 _ - .`) in the server name replaced by `_`.
 * A name longer than 128 characters is cut to 119 and given `_<8 hex>` of
 * a SHA-256 of `server\0tool`; the proxy also adds that suffix when two
 * different (server, tool) pairs would otherwise get the same name, so
 * names stay collision-free across servers.
 *
 * @module
 */
import { sha256Hex } from "../trace/hash.ts";
import type { ExposedTool } from "../trace/tool_events.ts";

/** Longest tool name MCP allows. */
export const MAX_TOOL_NAME = 128;

/**
 * The namespaced name of an upstream tool (before collision handling).
 *
 * @param server Upstream server name.
 * @param tool The upstream's tool name.
 * @returns A name within MCP's tool-name rules.
 */
export function namespacedName(server: string, tool: string): string {
  const s = server.replace(/[^A-Za-z0-9_.-]/g, "_") || "server";
  const t = tool.replace(/[^A-Za-z0-9_.-]/g, "_") || "tool";
  const name = `${s}__${t}`;
  return name.length <= MAX_TOOL_NAME
    ? name
    : withSuffix(name, { server, tool });
}

/**
 * A name made unique with a hash suffix of the pair.
 *
 * @param name Base name.
 * @param pair The server and tool names the suffix is hashed from.
 * @returns `<name cut to 119>_<8 hex>`.
 */
export function withSuffix(
  name: string,
  pair: { server: string; tool: string },
): string {
  const { server, tool } = pair;
  return `${name.slice(0, MAX_TOOL_NAME - 9)}_${
    sha256Hex(`${server}\0${tool}`).slice(0, 8)
  }`;
}

/** An upstream tool exposed by the proxy. */
export class ProxiedTool {
  /** Upstream server name. */
  readonly server: string;
  /** The upstream's own tool name (what calls are forwarded to). */
  readonly name: string;
  /** Input JSON schema, exactly as the upstream declared it. */
  readonly input_schema: Record<string, unknown>;
  /** Output JSON schema as declared, or null. */
  readonly output_schema: Record<string, unknown> | null;
  /** Description. */
  readonly description: string;
  /** Everything else the upstream declared (title, annotations, …), kept as-is. */
  readonly extra: Record<string, unknown>;
  #namespaced: string;

  /**
   * Create a `ProxiedTool`.
   *
   * @param fields The tool as listed by the upstream.
   */
  constructor(fields: {
    server: string;
    name: string;
    input_schema: Record<string, unknown>;
    output_schema?: Record<string, unknown> | null;
    description?: string;
    extra?: Record<string, unknown>;
  }) {
    this.server = fields.server;
    this.name = fields.name;
    this.input_schema = fields.input_schema;
    this.output_schema = fields.output_schema ?? null;
    this.description = fields.description ?? "";
    this.extra = fields.extra ?? {};
    this.#namespaced = namespacedName(fields.server, fields.name);
  }

  /** The host-visible name, namespaced by server. */
  get namespaced(): string {
    return this.#namespaced;
  }

  /**
   * The MCP annotations the upstream declared (`readOnlyHint`,
   * `destructiveHint`, `idempotentHint`, `openWorldHint`, `title`), keeping
   * only those with the type MCP gives them; null when it declared none.
   */
  get annotations(): ExposedTool["annotations"] | null {
    return toolAnnotations(this.extra.annotations);
  }

  /** Logical id: `mcp:<server>/<tool>` (as the host adapters name MCP tools). */
  get logicalId(): string {
    return `mcp:${this.server}/${this.name}`;
  }

  /**
   * Give this tool a collision-free name (used by the proxy on a clash).
   * @returns The new name.
   */
  disambiguate(): string {
    this.#namespaced = withSuffix(namespacedName(this.server, this.name), {
      server: this.server,
      tool: this.name,
    });
    return this.#namespaced;
  }
}

const HINTS = [
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
] as const;

/**
 * The MCP tool annotations in a declared value: the four hints when they are
 * booleans and `title` when it is a string; anything else is left out.
 *
 * @param value A tool's `annotations` as listed.
 * @returns The annotations, or null when none are usable.
 */
export function toolAnnotations(
  value: unknown,
): ExposedTool["annotations"] | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return null;
  }
  const v = value as Record<string, unknown>;
  const out: NonNullable<ExposedTool["annotations"]> = {};
  if (typeof v.title === "string") out.title = v.title;
  for (const h of HINTS) {
    if (typeof v[h] === "boolean") out[h] = v[h] as boolean;
  }
  return Object.keys(out).length ? out : null;
}
