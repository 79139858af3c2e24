/**
 * The toolsets that come with imported trajectories, as `toolset.exposed`
 * payloads: OpenAI-style `tools` lists (with MCP `annotations` when a
 * definition carries them), τ²'s `info.environment_info.tool_defs` when
 * present, and τ²'s own declared tool types for the file's domain
 * (`domain_name`). The compiler reads the annotations back to know which
 * tools only read (`resolveEffects`); `origin` says where they came from:
 * `domain:tau2/<name>` for τ²'s declared types, `file` for the file's own
 * definitions.
 *
 * @module
 */
import type {
  ExposedTool,
  ToolsetExposedPayload,
} from "../trace/tool_events.ts";
import { toolAnnotations } from "../proxy/proxied_tool.ts";
import { tau2DomainTools, tau2ToolAnnotations } from "./tau2_tool_types.ts";

/** `origin` of a toolset taken from the file's own tool definitions. */
export const FILE_TOOLSET_ORIGIN = "file";

/** Prefix of `origin` for a toolset typed by a benchmark's domain table. */
export const DOMAIN_TOOLSET_PREFIX = "domain:";

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The toolset a τ² file declares: its domain's tools with τ²'s declared
 * types as annotations, and the `tool_defs` / `user_tool_defs` schemas when
 * the file carries them.
 *
 * @param data The parsed τ² file.
 * @returns The payload, or null when the file names no known domain and has no definitions.
 */
export function tau2Toolset(data: unknown): ToolsetExposedPayload | null {
  const env = isObj(data) && isObj(data.info) &&
      isObj(data.info.environment_info)
    ? data.info.environment_info
    : {};
  const domain = typeof env.domain_name === "string" ? env.domain_name : "";
  const defs: Record<string, unknown> = {
    ...(isObj(env.tool_defs) ? env.tool_defs : {}),
    ...(isObj(env.user_tool_defs) ? env.user_tool_defs : {}),
  };
  const typed = tau2DomainTools(domain);
  const names = [...new Set([...typed, ...Object.keys(defs).sort()])];
  if (!names.length) return null;
  const tools = names.map((name): ExposedTool => {
    const def = isObj(defs[name]) ? defs[name] as Record<string, unknown> : {};
    const annotations = tau2ToolAnnotations(domain, name);
    return {
      name,
      logical_id: name,
      ...(typeof def.doc === "string" ? { description: def.doc } : {}),
      ...(isObj(def.params) ? { input_schema: def.params } : {}),
      ...(isObj(def.returns) ? { output_schema: def.returns } : {}),
      ...(annotations ? { annotations } : {}),
    };
  });
  return {
    origin: typed.length
      ? `${DOMAIN_TOOLSET_PREFIX}tau2/${domain}`
      : FILE_TOOLSET_ORIGIN,
    tools,
  };
}

/**
 * The toolset of an OpenAI-style `tools` list: `{type: "function", function:
 * {name, description, parameters}}` or a flat `{name, description,
 * parameters | input_schema | inputSchema}`, with MCP `annotations` beside
 * either when present.
 *
 * @param list The trajectory's `tools` value.
 * @returns The payload, or null when there is no list or it is empty.
 * @throws {TypeError} Naming the definition that has no tool name.
 */
export function openaiToolset(list: unknown): ToolsetExposedPayload | null {
  if (!Array.isArray(list) || !list.length) return null;
  const tools = list.map((d, k): ExposedTool => {
    const fn = isObj(d) && isObj(d.function) ? d.function : d;
    if (!isObj(fn) || typeof fn.name !== "string" || !fn.name) {
      throw new TypeError(`tool definition ${k} has no name`);
    }
    const schema = fn.parameters ?? fn.input_schema ?? fn.inputSchema;
    const annotations = toolAnnotations(
      isObj(d) && d.annotations !== undefined ? d.annotations : fn.annotations,
    );
    return {
      name: fn.name,
      logical_id: fn.name,
      ...(typeof fn.description === "string"
        ? { description: fn.description }
        : {}),
      ...(isObj(schema) ? { input_schema: schema } : {}),
      ...(annotations ? { annotations } : {}),
    };
  });
  return { origin: FILE_TOOLSET_ORIGIN, tools };
}
