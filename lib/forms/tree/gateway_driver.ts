/**
 * {@linkcode TreeGatewayDriver}: a tree-form package served at the model
 * API, inside an agent it does not control (Claude Code through
 * `ANTHROPIC_BASE_URL`): one more driver of the tree engine (`walkTree`),
 * beside the replay that verifies (`tree_replay.ts`) and the runtime that
 * calls tools itself (`behavior_runtime.ts`).
 *
 * Each request carries the whole conversation, so the driver rebuilds the
 * tree's position from it on every request (no state kept between
 * requests): it walks the tree with the agent's own calls and their
 * results standing in for the tools, in order, the results turned back
 * into the values the stores held in training (`host_results.ts`). Where
 * the conversation ends:
 *
 * - an action whose arguments bind: the gateway answers with that tool
 *   call itself, in the host's own shape (the agent runs it and sends the
 *   result back), with no upstream request;
 * - a model leaf: a value every training session that reached it wrote
 *   the same way is filled in; otherwise the request goes to the model
 *   untouched and the model's call of the leaf's tool is checked against
 *   the action's template (`check`): the bound parts must be what the
 *   conversation showed, the leaf's part is the model's;
 * - the tree's end, or a conversation that went another way (another
 *   task, a call or result the tree did not expect, more words from the
 *   user, a react leaf): the request passes through untouched with the
 *   reason; since the history stays in every later request, the tree
 *   stays out of that conversation from then on.
 *
 * A conversation the package does not apply to (its opening is not what
 * the training sessions opened with: `applies_to`; a tool the tree calls
 * is not offered, or lost an argument) passes through too.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import { openingMisfit, openingOf } from "../../package/applies_to.ts";
import type {
  NormRequest,
  NormToolCall,
  NormToolResult,
} from "../../model_gateway/wire_types.ts";
import type {
  Refusal,
  ServedCall,
  ServedPackage,
  ServingDecision,
} from "../../model_gateway/serving.ts";
import type { NormStep } from "../../lineage/records.ts";
import { UnservableError } from "../unservable_error.ts";
import { walkTree } from "./tree_engine.ts";
import { TREE_KINDS } from "./tree_kinds.ts";
import { treeNodes } from "./tree_nodes.ts";
import { driveTree } from "./tree_drive.ts";
import { recordedOutputs } from "./recorded_choice.ts";
import { leafRefusals } from "./leaf_check.ts";
import { type StoreShape, storeShapes, storeValue } from "./host_results.ts";
import type {
  ActionNode,
  PredictNode,
  TreeAnswer,
  TreeRequest,
} from "./tree_requests.ts";

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** One call of the conversation, with its answer when the agent sent it. */
interface Turn {
  call: NormToolCall;
  result: NormToolResult | null;
}

/** Where the conversation stands in the tree. */
type Position =
  /** The next action binds: the gateway makes the call. */
  | { kind: "serve"; call: ServedCall }
  /** A model leaf: the model answers, its call of `action` checked. */
  | {
    kind: "leaf";
    leaf: PredictNode;
    action: ActionNode;
    board: Record<string, unknown>;
  }
  /** The tree is out of this conversation (the reason). */
  | { kind: "out"; reason: string };

/** The conversation's working directory, as Claude Code names it in its system prompt. */
function cwdOf(req: NormRequest): string | null {
  for (const m of req.messages) {
    if (m.role !== "system") continue;
    const hit = /Primary working directory: ([^\s"\\]+)/.exec(m.text);
    if (hit) return hit[1];
  }
  return null;
}

/** A tree-form package, served at the model API. */
export class TreeGatewayDriver implements ServedPackage {
  readonly id: string;
  readonly #pkg: BehaviorPackage;
  readonly #shapes: Map<string, StoreShape>;
  /** Tool → the argument names the tree's actions give it (top level). */
  readonly #argNames = new Map<string, Set<string>>();

  /**
   * Serve a validated tree-form package.
   *
   * @param pkg The package (`validatePackage`).
   * @throws {UnservableError} For a package of another form.
   */
  constructor(pkg: BehaviorPackage) {
    const root = pkg.ir.nodes[pkg.ir.root];
    if (!root || !TREE_KINDS.has(root.kind)) {
      throw new UnservableError(
        `${pkg.manifest.name} is not a tree-form package (its root is a ${
          root?.kind ?? "missing"
        } node): serve a package through its form (formOf(pkg).serve)`,
      );
    }
    this.#pkg = pkg;
    this.id = `${pkg.manifest.name}@${pkg.digest}`;
    this.#shapes = storeShapes(pkg.ir);
    for (const n of Object.values(treeNodes(pkg.ir))) {
      if (n.kind !== "action") continue;
      const names = this.#argNames.get(n.tool) ?? new Set<string>();
      for (const p of Object.keys(n.args)) names.add(p.split(/[.[]/)[0]);
      this.#argNames.set(n.tool, names);
    }
  }

  /** Why the package does not fit the request (its opening, its tools), or null. */
  #misfit(req: NormRequest): string | null {
    const opening = openingMisfit(
      this.#pkg.applies_to,
      openingOf(req.messages),
    );
    if (opening) return opening;
    const offered = new Map(req.tools.map((t) => [t.name, t]));
    for (const [tool, learned] of this.#argNames) {
      const t = offered.get(tool);
      if (!t) return `the request does not offer ${tool}, which the tree calls`;
      const schema = t.input_schema as { properties?: unknown } | undefined;
      if (!schema || !isObj(schema.properties)) continue;
      const gone = [...learned].filter((a) =>
        !Object.hasOwn(schema.properties as object, a)
      );
      if (gone.length) {
        return `the schema of ${tool} changed: it has no ${
          gone.join(", ")
        } (the tree gives them)`;
      }
    }
    return null;
  }

  /** The conversation's calls in order, each with its answer; or why the tree is out. */
  #turns(req: NormRequest): Turn[] | string {
    const turns: Turn[] = [];
    const byId = new Map<string, Turn>();
    let users = 0;
    for (const m of req.messages) {
      if (m.role === "assistant") {
        for (const c of m.tool_calls) {
          const t = { call: c, result: null };
          turns.push(t);
          byId.set(c.id, t);
        }
        continue;
      }
      for (const r of m.tool_results) {
        const t = byId.get(r.id);
        if (t) t.result = r;
      }
      if (m.role === "user" && m.text !== "" && ++users > 1) {
        return "the user said more than the opening (a correction, another request): the rest of this conversation is the model's";
      }
    }
    return turns;
  }

  /** Rebuild the position from the conversation. */
  #position(req: NormRequest): Position {
    const turns = this.#turns(req);
    if (typeof turns === "string") return { kind: "out", reason: turns };
    const cwd = cwdOf(req);
    const input: Record<string, unknown> = {
      text: openingOf(req.messages) ?? "",
      ...(cwd === null ? {} : { cwd }),
    };
    let cursor = 0;
    let at: Position | null = null;
    // The walk's blackboard as it writes it (a leaf's check reads it).
    let board: Record<string, unknown> = { input };
    const halt = (p: Position): TreeAnswer => {
      at = p;
      return {
        halt: {
          status: "stopped",
          reason: p.kind === "out" ? p.reason : p.kind,
        },
      };
    };
    const answer = (r: TreeRequest): TreeAnswer => {
      switch (r.kind) {
        case "predict": {
          const next = turns[cursor];
          if (next) {
            // The call the leaf fed is in the conversation: what the
            // model (or the gateway) decided is read from it.
            const step = {
              logical_tool: next.call.name,
              arguments: next.call.arguments,
              arg_lineage: {},
            } as unknown as NormStep;
            const outputs = recordedOutputs(r.node, step);
            if (Object.values(outputs).some((v) => v === null)) {
              return halt({
                kind: "out",
                reason:
                  `the conversation went another way: ${next.call.name} does not fit the template of ${r.node.decides.node}`,
              });
            }
            return { outputs };
          }
          const same = this.#unanimous(r.node);
          if (same) return { outputs: same };
          const action = treeNodes(this.#pkg.ir)[r.node.decides.node];
          if (action?.kind !== "action" || r.node.decides.kind !== "value") {
            return halt({
              kind: "out",
              reason: `${r.node.id} decides ${
                r.node.decides.kind === "value"
                  ? "a value"
                  : `an ${r.node.decides.kind}`
              } the model answers: the rest is the model's`,
            });
          }
          return halt({
            kind: "leaf",
            leaf: r.node,
            action,
            board: structuredClone(board),
          });
        }
        case "call": {
          const next = turns[cursor];
          if (!next) {
            return halt({
              kind: "serve",
              call: { name: r.tool, arguments: r.args },
            });
          }
          if (next.call.name !== r.tool || !sameArgs(r.args, next.call)) {
            return halt({
              kind: "out",
              reason:
                `the conversation went another way: the tree's ${r.node.id} calls ${r.tool}(${
                  canonicalJson(r.args)
                }), the agent called ${next.call.name}(${
                  canonicalJson(next.call.arguments)
                })`,
            });
          }
          if (!next.result) {
            return halt({
              kind: "out",
              reason: `${r.tool} has no answer in the conversation`,
            });
          }
          cursor++;
          if (next.result.is_error) {
            return halt({
              kind: "out",
              reason: `${r.tool} failed (${
                next.result.text.slice(0, 200)
              }): a result the tree did not expect`,
            });
          }
          const v = storeValue({
            tool: r.tool,
            args: next.call.arguments,
            text: next.result.text,
            shape: this.#shapes.get(r.node.store) ?? "text",
          });
          if (!v) {
            return halt({
              kind: "out",
              reason:
                `the tree reads ${r.tool}'s result as the host's hooks record it, which the API's text does not give`,
            });
          }
          return { ok: true, result: v.value };
        }
        case "unresolved":
          return halt({
            kind: "out",
            reason: `a result the tree did not expect: ${r.node.id}: ${
              (r.error as Error)?.message ?? String(r.error)
            }`,
          });
        case "branch":
          return;
        case "react_open":
        case "react":
        case "react_call":
        case "foreign":
          return halt({
            kind: "out",
            reason:
              `${r.node.id} is the model's to run: the rest is the model's`,
          });
      }
    };
    const walk = walkTree(this.#pkg.ir, {
      input,
      signatures: this.#pkg.signatures,
      oracle: "live",
      observer: {
        write: (key, value) => {
          board = { ...board, [key]: value };
        },
      },
    });
    const result = driveTree(walk, answer);
    if (at) return at;
    if (result.end === "end") {
      return {
        kind: "out",
        reason: cursor < turns.length
          ? "the conversation went on past the tree's end: the rest is the model's"
          : "the tree has run to its end: the model finishes the turn",
      };
    }
    return {
      kind: "out",
      reason: `the tree stopped: ${result.reason ?? result.status}`,
    };
  }

  /**
   * The outputs of a leaf that every training session reaching it wrote
   * the same way (a constant of full support, no counterexample, one
   * value), or null.
   */
  #unanimous(leaf: PredictNode): Record<string, unknown> | null {
    const d = leaf.decides;
    const action = treeNodes(this.#pkg.ir)[d.node];
    if (d.kind !== "value" || action?.kind !== "action") return null;
    const prov = this.#pkg.provenance.find((p) => p.node_id === leaf.id);
    const ids = new Set(prov?.candidate_ids ?? []);
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(leaf.outputs)) {
      if (d.within?.[name] !== undefined) return null;
      const arg = d.args?.[name] ?? d.arg;
      const c = this.#pkg.candidates.find((c) =>
        ids.has(c.candidate_id) && c.type === "constant" &&
        c.key[1] === action.tool && c.key[2] === arg
      );
      const e = c?.evidence;
      if (
        !c || !e || e.counterexamples !== 0 || e.support !== e.applicable ||
        e.support < 2 || e.variety !== 1 || !("value" in c.claim)
      ) return null;
      out[name] = c.claim.value;
    }
    return out;
  }

  decide(req: NormRequest): ServingDecision {
    const misfit = this.#misfit(req);
    if (misfit) return { kind: "skip", reason: misfit };
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
    const p = this.#position(req);
    if (p.kind === "out") return { kind: "skip", reason: p.reason };
    if (p.kind === "leaf") {
      // The model answers the leaf; its call is checked (`check`).
      return { kind: "forward", narrowing: { schemas: {}, hidden: [] } };
    }
    const refusal = toolChoiceBlocks(req, p.call.name);
    if (refusal) return { kind: "skip", reason: refusal };
    return { kind: "serve", calls: [p.call] };
  }

  check(req: NormRequest, calls: NormToolCall[]): Refusal[] {
    const p = this.#position(req);
    return p.kind === "leaf" ? leafRefusals(p, calls) : [];
  }
}

/** Whether the agent's call has the arguments the tree gives (others it added aside). */
function sameArgs(args: Record<string, unknown>, call: NormToolCall): boolean {
  if (call.arguments_text !== undefined) return false;
  return Object.entries(args).every(([k, v]) =>
    canonicalJson(v) === canonicalJson(call.arguments[k] ?? null)
  );
}

/** Why the request's `tool_choice` does not let the gateway make this call, or null. */
function toolChoiceBlocks(req: NormRequest, tool: string): string | null {
  const choice = req.params.tool_choice;
  if (choice === "none" || (isObj(choice) && choice.type === "none")) {
    return "the request asks for no tool call (tool_choice none)";
  }
  const forced = isObj(choice)
    ? (isObj(choice.function) && typeof choice.function.name === "string"
      ? choice.function.name
      : typeof choice.name === "string"
      ? choice.name
      : null)
    : null;
  if (forced !== null && forced !== tool) {
    return `the request forces ${forced}; the tree's next call is ${tool}`;
  }
  return null;
}
