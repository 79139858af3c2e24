/**
 * {@linkcode GatewayDriver}: the agent form's third driver (beside the
 * replay that verifies and evaluates, and `Conversation`): a compiled
 * package served at the model API by the model gateway, inside an agent it
 * does not control. Each request carries the whole conversation, so the
 * driver rebuilds the engine's state from it — user messages, the agent's
 * calls and their results — in the order `AgentSession` would have seen
 * them (lookups become due after each user message and each result), then
 * decides: the lookups due now and not yet made are answered by the
 * gateway itself; otherwise the request goes to the model with the
 * state-changing tools narrowed as `Conversation` narrows them
 * (`packageOffer`), and the model's state-changing calls are checked
 * (`AgentEngine.check`) before the agent may see them.
 *
 * @module
 */
import { agentNodes } from "./agent_nodes.ts";
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import { changesState } from "../../package/tool_effects.ts";
import { AgentEngine } from "./agent_engine.ts";
import type { ChatTool } from "../../models/chat_types.ts";
import type {
  NormRequest,
  NormToolCall,
} from "../../model_gateway/wire_types.ts";
import type {
  Refusal,
  ServedCall,
  ServedPackage,
  ServingDecision,
} from "../../model_gateway/serving.ts";
import { packageOffer } from "./tool_schemas.ts";
import { UnservableError } from "../unservable_error.ts";
import { openingMisfit, openingOf } from "../../package/applies_to.ts";

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const key = (tool: string, args: Record<string, unknown>) =>
  `${tool}\u0000${canonicalJson(args)}`;

/** The engine rebuilt from one request's conversation. */
interface Rebuilt {
  engine: AgentEngine;
  /** Lookups issued and not yet made, in order. */
  due: ServedCall[];
}

/** An agent-form package, served at the model API. */
export class GatewayDriver implements ServedPackage {
  readonly id: string;
  readonly #pkg: BehaviorPackage;
  readonly #fanout: number | undefined;
  /** Tool → the argument names the package learned (top level). */
  readonly #argNames = new Map<string, Set<string>>();
  readonly #lookupTools: Set<string>;

  /**
   * Serve a validated package.
   *
   * @param pkg The package (`validatePackage`).
   * @param options Fan-out cap (the package's own when absent).
   * @throws {UnservableError} For a package of another form (serve a
   *   package through its form: `formOf(pkg).serve(pkg)`).
   */
  constructor(pkg: BehaviorPackage, options: { fanout?: number } = {}) {
    const root = pkg.ir.nodes[pkg.ir.root];
    if (!root || root.kind !== "agent") {
      throw new UnservableError(
        `${pkg.manifest.name} is not an agent-form package (its root is a ${
          root?.kind ?? "missing"
        } node): serve a package through its form (formOf(pkg).serve)`,
      );
    }
    this.#pkg = pkg;
    this.#fanout = options.fanout;
    this.id = `${pkg.manifest.name}@${pkg.digest}`;
    const lookups = new Set<string>();
    for (const n of Object.values(agentNodes(pkg.ir))) {
      if (n.kind === "lookup") {
        lookups.add(n.tool);
        this.#learn(n.tool, n.args.map((a) => a.path));
      }
      if (n.kind === "choice") {
        for (const t of n.tools) this.#learn(t.tool, t.args.map((a) => a.path));
      }
    }
    this.#lookupTools = lookups;
  }

  #learn(tool: string, paths: string[]): void {
    const names = this.#argNames.get(tool) ?? new Set<string>();
    for (const p of paths) names.add(p.split(/[.[]/)[0]);
    this.#argNames.set(tool, names);
  }

  #writes(tool: string): boolean {
    return changesState(this.#pkg.manifest.effects ?? {}, tool);
  }

  /** Why the package does not fit the request (its opening, its tools), or null. */
  #misfit(req: NormRequest): string | null {
    const opening = openingMisfit(
      this.#pkg.applies_to,
      openingOf(req.messages),
    );
    if (opening) return opening;
    const effects = this.#pkg.manifest.effects ?? {};
    const offered = new Map(req.tools.map((t) => [t.name, t]));
    for (const t of req.tools) {
      if (!(t.name in effects)) {
        return `the request offers ${t.name}, a tool the package does not know`;
      }
      const learned = this.#argNames.get(t.name);
      const schema = t.input_schema as { properties?: unknown } | undefined;
      if (!learned || !schema || typeof schema.properties !== "object") {
        continue;
      }
      const props = Object.keys(schema.properties ?? {});
      const gone = [...learned].filter((a) => !props.includes(a));
      if (gone.length > 0) {
        return `the schema of ${t.name} changed: it has no ${
          gone.join(", ")
        } (the package learned them)`;
      }
    }
    for (const tool of this.#lookupTools) {
      if (!offered.has(tool)) {
        return `the request does not offer ${tool}, which the package looks up`;
      }
    }
    return null;
  }

  /** Replay the conversation into a fresh engine. */
  #rebuild(req: NormRequest): Rebuilt {
    const engine = new AgentEngine(this.#pkg.ir, { fanout: this.#fanout });
    // Lookups issued and not yet answered by the agent: served next.
    const pending = new Map<string, ServedCall>();
    const issue = () => {
      for (const c of engine.dueLookups()) {
        pending.set(key(c.tool, c.args), { name: c.tool, arguments: c.args });
      }
    };
    const asked = new Map<string, NormToolCall>();
    for (const m of req.messages) {
      if (m.role === "assistant") {
        for (const c of m.tool_calls) asked.set(c.id, c);
        continue;
      }
      for (const r of m.tool_results) {
        const call = asked.get(r.id);
        if (!call) continue;
        asked.delete(r.id);
        const write = this.#writes(call.name);
        const served = !write && pending.delete(key(call.name, call.arguments));
        const ok = !r.is_error && !/^Error:/.test(r.text);
        // As AgentSession records them: a write is a write, made or not.
        engine.record(
          { tool: call.name, args: call.arguments, ok, result: r.text },
          served ? "lookup" : write ? "choice" : "model",
          { changesState: write },
        );
        issue();
      }
      if (m.role === "user" && m.text) {
        engine.user(m.text);
        issue();
      }
    }
    return { engine, due: [...pending.values()] };
  }

  decide(req: NormRequest): ServingDecision {
    const misfit = this.#misfit(req);
    if (misfit) return { kind: "skip", reason: misfit };
    // A turn that waits on the agent's own calls is the agent's to finish.
    const last = req.messages.at(-1);
    if (last?.role === "assistant") {
      return {
        kind: "skip",
        reason: "the conversation ends with the model's turn",
      };
    }
    if (typeof req.params.n === "number" && req.params.n > 1) {
      return { kind: "skip", reason: "n > 1 asks for several answers" };
    }
    const { engine, due } = this.#rebuild(req);
    const allowed = this.#allowedNow(req, due);
    if (allowed.length > 0) return { kind: "serve", calls: allowed };
    const offered = new Map(req.tools.map((t) => [t.name, t]));
    const schemaOf = (name: string): ChatTool => ({
      name,
      parameters: (offered.get(name)?.input_schema ??
        { type: "object", properties: {} }) as ChatTool["parameters"],
    });
    const names = [...offered.keys()];
    const shown = packageOffer(this.#pkg, {
      bound: names,
      schemaOf,
      candidates: engine.choiceCandidates(),
    });
    const byName = new Map(shown.map((t) => [t.name, t]));
    const schemas: Record<string, unknown> = {};
    const hidden: string[] = [];
    for (const name of names) {
      if (!this.#writes(name)) continue;
      const s = byName.get(name);
      if (s) schemas[name] = s.parameters;
      else hidden.push(name);
    }
    return { kind: "forward", narrowing: { schemas, hidden } };
  }

  /**
   * The due lookups the request lets the package answer with: none when it
   * asks for no tool (`tool_choice: "none"`), only the forced tool's when it
   * forces one, one at a time when parallel calls are off.
   */
  #allowedNow(req: NormRequest, due: ServedCall[]): ServedCall[] {
    const choice = req.params.tool_choice;
    let out = due;
    if (choice === "none" || (isObj(choice) && choice.type === "none")) {
      return [];
    }
    const forced = isObj(choice)
      ? (isObj(choice.function) && typeof choice.function.name === "string"
        ? choice.function.name
        : typeof choice.name === "string"
        ? choice.name
        : null)
      : null;
    if (forced !== null) out = out.filter((c) => c.name === forced);
    const serial = req.params.parallel_tool_calls === false ||
      (isObj(choice) && choice.disable_parallel_tool_use === true);
    return serial ? out.slice(0, 1) : out;
  }

  check(req: NormRequest, calls: NormToolCall[]): Refusal[] {
    const writes = calls.filter((c) => this.#writes(c.name));
    if (writes.length === 0) return [];
    const { engine } = this.#rebuild(req);
    const out: Refusal[] = [];
    for (const c of writes) {
      if (c.arguments_text !== undefined) {
        out.push({
          id: c.id,
          tool: c.name,
          reason: `the arguments of ${c.name} are not a JSON object`,
        });
        continue;
      }
      const verdict = engine.check(c.name, c.arguments);
      if (!verdict.ok) {
        out.push({ id: c.id, tool: c.name, reason: verdict.reason });
      }
    }
    return out;
  }
}
