/**
 * The tree form's node kinds behind the `NodeKind` contract
 * ({@linkcode TREE_KINDS}): how a package's loader checks each one's
 * fields, what the structure check reads and writes for it, its children,
 * the tools it calls, its effects against the manifest's, and its line in
 * explain.
 *
 * @module
 */
import type { NodeKind } from "../../package/node_kind.ts";
import { NodeKinds } from "../../package/node_kind.ts";
import type {
  ActionNode,
  ArgExpr,
  BranchNode,
  PredictNode,
  ReactNode,
  SequenceNode,
  StopNode,
} from "./tree_nodes.ts";

const REF_IN_TEMPLATE = /\$ref\(([^)]*)\)/g;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function argText(e: ArgExpr): string {
  if ("const" in e) return JSON.stringify(e.const);
  if ("ref" in e) return `ref ${e.ref}`;
  return `template "${e.template}"`;
}

const SEQUENCE: NodeKind<SequenceNode> = {
  kind: "sequence",
  works: false,
  ordersOnly: true,
  shapeProblem: (n) =>
    Array.isArray(n.children) ? null : `sequence ${n.id} has no children list`,
  children: (n) => n.children,
  describe: (n) => `sequence of ${n.children.length}`,
};

function actionShape(n: ActionNode): string | null {
  if (
    typeof n.tool !== "string" || typeof n.store !== "string" ||
    !isObj(n.args)
  ) {
    return `action ${n.id} needs tool, store and args`;
  }
  for (const [arg, e] of Object.entries(n.args)) {
    const x = e as Record<string, unknown>;
    if (
      !isObj(x) ||
      !("const" in x || typeof x.ref === "string" ||
        typeof x.template === "string")
    ) {
      return `action ${n.id} argument ${arg} is not a const, ref or template`;
    }
  }
  return null;
}

const ACTION: NodeKind<ActionNode> = {
  kind: "action",
  works: true,
  shapeProblem: actionShape,
  tools: (n) => [n.tool],
  check: (n, scope) => {
    scope.tool(n.id, n.tool);
    for (const arg in n.args) {
      const e = n.args[arg];
      if ("ref" in e) scope.needs(e.ref, `${n.id}.${arg}`);
      if ("template" in e) {
        for (const m of e.template.matchAll(REF_IN_TEMPLATE)) {
          scope.needs(m[1], `${n.id}.${arg}`);
        }
      }
    }
    scope.writes(n.store);
  },
  effectProblems: (n, effectOf) => {
    const m = effectOf(n.tool);
    return m !== undefined && m !== n.effect
      ? [`${n.id}: ${n.tool} is ${n.effect} there, ${m} in the manifest`]
      : [];
  },
  describe: (n) =>
    `call ${n.tool}(${
      Object.entries(n.args).map(([k, v]) => `${k} = ${argText(v)}`).join(
        ", ",
      )
    }) → ${n.store}` +
    (n.recovery
      ? `; retry on ${
        n.recovery.retry_on.join(", ")
      } up to ${n.recovery.max_attempts} attempts`
      : "") +
    (n.effect !== "read" ? ` [${n.effect}]` : ""),
};

const BRANCH: NodeKind<BranchNode> = {
  kind: "branch",
  works: false,
  scoped: true,
  sharesChildren: true,
  shapeProblem: (n) =>
    typeof n.on !== "string" || !Array.isArray(n.cases) ||
      typeof n.otherwise !== "string"
      ? `branch ${n.id} needs on, cases and otherwise`
      : null,
  children: (n) => [...n.cases.map((c) => c.then), n.otherwise],
  check: (n, scope) => scope.needs(n.on, n.id),
  describe: (n) =>
    `branch on ${n.on}: ${
      n.cases.map((c) => `${JSON.stringify(c.equals)} → ${c.then}`).join(", ")
    }; otherwise ${n.otherwise}`,
};

const PREDICT: NodeKind<PredictNode> = {
  kind: "predict",
  works: true,
  shapeProblem: (n) =>
    typeof n.signature !== "string" || !isObj(n.inputs) || !isObj(n.outputs)
      ? `predict ${n.id} needs signature, inputs and outputs`
      : null,
  check: (n, scope) => {
    const sig = scope.signature(n.id, n.signature);
    for (const [name, f] of Object.entries(sig?.outputs ?? {})) {
      if (!f.type) scope.problem(`${n.id}: output ${name} has no type`);
    }
    for (const p of Object.values(n.inputs)) scope.needs(p, `${n.id} input`);
    for (const v of Object.values(n.outputs)) scope.writes(v);
  },
  describe: (n) =>
    `model predicts ${
      Object.entries(n.outputs).map(([k, v]) => `${k} → ${v}`).join(", ")
    } (${n.signature}) from ${Object.values(n.inputs).join(", ")}`,
  details: (n, signatures) => {
    const sig = signatures[n.signature];
    return sig ? [`signature: ${sig.instructions}`] : [];
  },
};

const REACT: NodeKind<ReactNode> = {
  kind: "react",
  works: true,
  shapeProblem: (n) =>
    typeof n.signature !== "string" || !Array.isArray(n.tools) ||
      !(n.max_steps >= 1)
      ? `react ${n.id} needs signature, tools and max_steps`
      : null,
  check: (n, scope) => {
    scope.signature(n.id, n.signature);
    scope.writes(n.store);
  },
  describe: (n) =>
    `model acts with ${
      n.tools.join(", ")
    } for at most ${n.max_steps} steps (${n.signature})`,
};

const STOP: NodeKind<StopNode> = {
  kind: "stop",
  works: false,
  shapeProblem: (n) =>
    typeof n.reason !== "string" ? `stop ${n.id} needs a reason` : null,
  describe: (n) => `stop: ${n.reason}`,
};

/** The tree form's node kinds. */
export const TREE_KINDS: NodeKinds = new NodeKinds([
  SEQUENCE,
  ACTION,
  BRANCH,
  PREDICT,
  REACT,
  STOP,
] as NodeKind[]);
