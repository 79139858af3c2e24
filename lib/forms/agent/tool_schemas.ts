/**
 * The tool schemas a conversation shows its model: the capabilities' own
 * schemas when they declare them, otherwise an object schema derived from
 * the argument paths the package learned; and for a state-changing tool of
 * the choice leaf, the same schema with every restricted argument narrowed
 * to its candidates now (`enum`), so an API that enforces schemas cannot
 * even propose another value.
 *
 * @module
 */
import { agentNodes } from "./agent_nodes.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import type { ChoiceTool } from "./agent_nodes.ts";
import type { ChatTool, JsonSchema } from "../../models/chat_types.ts";

type Obj = Record<string, unknown>;

function argPaths(pkg: BehaviorPackage, tool: string): string[] {
  const out = new Set<string>();
  for (const n of Object.values(agentNodes(pkg.ir))) {
    if (n.kind === "lookup" && n.tool === tool) {
      for (const a of n.args) out.add(a.path);
    }
    if (n.kind === "choice") {
      for (const t of n.tools) {
        if (t.tool === tool) { for (const a of t.args) out.add(a.path); }
      }
    }
  }
  return [...out].sort();
}

/** Walk (creating as needed) to the schema of one argument path. */
function schemaAt(root: JsonSchema, path: string): Obj {
  let cur = root as Obj;
  for (const part of path.split(".")) {
    const m = /^([^[\]]+)((?:\[\*\])*)$/.exec(part);
    const name = m ? m[1] : part;
    const props = (cur.properties ??= {}) as Obj;
    cur.type ??= "object";
    let next = (props[name] ??= {}) as Obj;
    for (let i = 0; m && i < m[2].length / 3; i++) {
      next.type ??= "array";
      next = (next.items ??= {}) as Obj;
    }
    cur = next;
  }
  return cur;
}

/**
 * The schema of a tool the package uses, derived from the argument paths
 * it learned (no types: the package only knows names), for capabilities
 * that declare none.
 *
 * @param pkg The package.
 * @param tool Tool name.
 * @returns A chat tool.
 */
export function derivedToolSchema(
  pkg: BehaviorPackage,
  tool: string,
): ChatTool {
  const parameters: JsonSchema = { type: "object", properties: {} };
  for (const p of argPaths(pkg, tool)) schemaAt(parameters, p);
  return { name: tool, parameters };
}

/** What {@linkcode constrainedToolSchema} narrows a schema to. */
export interface ChoiceConstraint {
  /** The choice leaf's entry for the tool. */
  spec: ChoiceTool;
  /** Argument path → values (or a note for free text). */
  candidates: Record<string, unknown[] | string>;
}

/**
 * A choice tool's schema with each restricted argument narrowed to its
 * candidates now.
 *
 * @param base The tool's own schema.
 * @param choice The choice tool and its candidates.
 * @returns The narrowed schema, or null when a restricted argument has no
 *   candidate yet (the tool cannot be chosen now).
 */
export function constrainedToolSchema(
  base: ChatTool,
  choice: ChoiceConstraint,
): ChatTool | null {
  const { spec, candidates } = choice;
  const parameters = structuredClone(base.parameters) as JsonSchema;
  for (const a of spec.args) {
    const values = candidates[a.path];
    if (a.sources === null || values === undefined) continue;
    const at = schemaAt(parameters, a.path);
    if (typeof values === "string") {
      at.description = [at.description, `(${values})`].filter(Boolean).join(
        " ",
      );
      continue;
    }
    if (values.length === 0) return null;
    at.enum = values;
  }
  return {
    name: base.name,
    ...(base.description ? { description: base.description } : {}),
    parameters,
  };
}

/** What {@linkcode packageOffer} offers the model. */
export interface OfferParts {
  /** Names of the tools the capabilities bind. */
  bound: string[];
  /** A tool's schema before narrowing. */
  schemaOf: (tool: string) => ChatTool;
  /** Tool → argument path → candidates now. */
  candidates: Record<string, Record<string, unknown[] | string>>;
}

/**
 * The tools an agent-form package offers its model now: every tool the
 * capabilities bind that the package knows only reads, then each choice
 * tool with its arguments narrowed to their candidates (a choice tool with
 * an argument that has no candidate yet is left out), then the choice
 * leaf's tools training never made, as they are (their arguments are
 * checked by name when called).
 *
 * @param pkg The package.
 * @param offer The bound tools, their schemas and the choice candidates.
 * @returns The chat tools.
 */
export function packageOffer(
  pkg: BehaviorPackage,
  offer: OfferParts,
): ChatTool[] {
  const { bound, schemaOf, candidates } = offer;
  const names = [...bound].sort();
  const effects = pkg.manifest.effects ?? {};
  const out = names.filter((t) => effects[t] === "read").map(schemaOf);
  const choice = Object.values(agentNodes(pkg.ir)).find((n) =>
    n.kind === "choice"
  );
  for (const spec of choice?.kind === "choice" ? choice.tools : []) {
    if (!names.includes(spec.tool)) continue;
    const s = constrainedToolSchema(schemaOf(spec.tool), {
      spec,
      candidates: candidates[spec.tool] ?? {},
    });
    if (s) out.push(s);
  }
  const tools = choice?.kind === "choice" ? choice.tools : [];
  const unseen = choice?.kind === "choice" ? choice.unseen_tools ?? [] : [];
  for (const u of unseen) {
    if (!names.includes(u.tool)) continue;
    const s = unseenToolSchema(schemaOf(u.tool), {
      effect: u.effect,
      tools,
      candidates,
    });
    if (s) out.push(s);
  }
  return out;
}

/** What {@linkcode unseenToolSchema} narrows a schema to. */
export interface UnseenConstraint {
  /** Its effect. */
  effect: string;
  /** The choice leaf's tools. */
  tools: ChoiceTool[];
  /** Tool → argument path → candidates now. */
  candidates: Record<string, Record<string, unknown[] | string>>;
}

/**
 * The schema of a state-changing tool training never made, narrowed by
 * argument name as the choice leaf checks it: each top-level argument takes
 * the candidates of the same-named arguments of the choice tools; one that
 * no choice tool has stays free for a `write` tool, and a destructive tool
 * with such a required argument is not offered (it could not pass).
 *
 * @param base The tool's own schema.
 * @param unseen The tool's effect, the choice leaf's tools and their candidates.
 * @returns The narrowed schema, or null when it cannot be chosen now.
 */
export function unseenToolSchema(
  base: ChatTool,
  unseen: UnseenConstraint,
): ChatTool | null {
  const { effect, tools, candidates } = unseen;
  const params = base.parameters as Obj;
  const props = Object.keys((params.properties ?? {}) as Obj).sort();
  const required = new Set((params.required ?? []) as string[]);
  const spec: ChoiceTool = { tool: base.name, effect, args: [] };
  const cands: Record<string, unknown[] | string> = {};
  for (const p of props) {
    const values = new Map<string, unknown>();
    let note: string | null = null;
    let path: string | null = null;
    for (const t of tools) {
      for (const a of t.args) {
        if (a.sources === null || (a.path !== p && a.path !== `${p}[*]`)) {
          continue;
        }
        path = a.path;
        const c = candidates[t.tool]?.[a.path];
        if (typeof c === "string") note = c;
        else for (const v of c ?? []) values.set(JSON.stringify(v), v);
      }
    }
    if (path === null) {
      if (effect === "destructive" && required.has(p)) return null;
      continue;
    }
    spec.args.push({ path, sources: [] });
    cands[path] = note !== null && values.size === 0
      ? note
      : note !== null
      ? `${note}, or one of ${JSON.stringify([...values.values()])}`
      : [...values.values()];
  }
  // A destructive tool nothing learned can check is never offered.
  if (effect === "destructive" && spec.args.length === 0) return null;
  return constrainedToolSchema(base, { spec, candidates: cands });
}
