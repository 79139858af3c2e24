/**
 * Hostile package shapes (issue 35, item 2) for the structure check: each
 * builds a package document with a correct digest, so only the structure
 * can refuse it.
 *
 * @module
 */
import { IR_VERSION } from "../../lib/package/ir.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import { PACKAGE_VERSION } from "../../lib/package/package.ts";
import { packageDigest } from "../../lib/package/package_signature.ts";

/** A package document around some IR nodes, digested. */
export function packageOf(
  nodes: Record<string, unknown>,
  root: string,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    schema_version: PACKAGE_VERSION,
    manifest: {
      name: "hostile",
      version: "0.1.0",
      task_family: "",
      capture_fidelity: "F3",
      compiler_model_id: null,
      required_capabilities: ["t"],
      effects: { t: "read" },
      effects_source: {},
      episodes: 0,
      promoted_to_e4: false,
    },
    ir: {
      schema_version: IR_VERSION,
      name: "hostile",
      root,
      nodes,
      stores: [],
      variables: [],
      inputs: ["input.text"],
    },
    signatures: {},
    provenance: [],
    candidates: [],
    verification: {
      structural_ok: true,
      structural_problems: [],
      replay_checks: 0,
      replay_passed: 0,
      problems: [],
      episodes_replayed: 0,
      episodes_clean: 0,
    },
    sources: { digest: "", episodes: [] },
  };
  return { ...body, digest: packageDigest(body) };
}

const action = (id: string, store = `s_${id}`): IrNode => ({
  id,
  kind: "action",
  tool: "t",
  args: { q: { ref: "input.text" } },
  store,
  effect: "read",
  recovery: null,
});

const stop = (id: string): IrNode => ({ id, kind: "stop", reason: "end" });

/** The hostile shapes by name, each given a size. */
export const HOSTILE: Record<string, (n: number) => Record<string, unknown>> = {
  /** `n` branches, each with two cases and `otherwise` all on the next (3^n paths). */
  chainedBranches(n) {
    const nodes: Record<string, IrNode> = {};
    for (let i = 0; i < n; i++) {
      const next = i + 1 < n ? `b${i + 1}` : "end";
      nodes[`b${i}`] = {
        id: `b${i}`,
        kind: "branch",
        on: "input.text",
        cases: [{ equals: "x", then: next }, { equals: "y", then: next }],
        otherwise: next,
      };
    }
    nodes.end = stop("end");
    return packageOf(nodes, "b0");
  },
  /** The root among its own children. */
  rootInChildren() {
    return packageOf({
      root: { id: "root", kind: "sequence", children: ["a", "root"] },
      a: action("a"),
    }, "root");
  },
  /** A cycle below the root: x → y → z → x. */
  cycleBelowRoot() {
    return packageOf({
      root: { id: "root", kind: "sequence", children: ["x"] },
      x: { id: "x", kind: "sequence", children: ["y"] },
      y: {
        id: "y",
        kind: "branch",
        on: "input.text",
        cases: [{ equals: 1, then: "z" }],
        otherwise: "end",
      },
      z: { id: "z", kind: "sequence", children: ["x"] },
      end: stop("end"),
    }, "root");
  },
  /** `n` sequences, each the only child of the one before. */
  nestedSequences(n) {
    const nodes: Record<string, IrNode> = {};
    for (let i = 0; i < n; i++) {
      nodes[`q${i}`] = {
        id: `q${i}`,
        kind: "sequence",
        children: [i + 1 < n ? `q${i + 1}` : "a"],
      };
    }
    nodes.a = action("a");
    return packageOf(nodes, "q0");
  },
  /** `n` actions under one sequence, each reading the store of the one before. */
  wideSequence(n) {
    const children: string[] = [];
    const nodes: Record<string, IrNode> = {};
    for (let i = 0; i < n; i++) {
      const id = `a${i}`;
      children.push(id);
      nodes[id] = {
        ...action(id, `s${i}`),
        args: { q: { ref: i ? `s${i - 1}.id` : "input.text" } },
      } as IrNode;
    }
    nodes.root = { id: "root", kind: "sequence", children };
    return packageOf(nodes, "root");
  },
  /** `n` levels where each level's two arms write different stores and share the next level (2^n scopes). */
  sharedArms(n) {
    const nodes: Record<string, IrNode> = {};
    for (let i = 0; i < n; i++) {
      const next = i + 1 < n ? `b${i + 1}` : "end";
      nodes[`b${i}`] = {
        id: `b${i}`,
        kind: "branch",
        on: "input.text",
        cases: [{ equals: 1, then: `l${i}` }],
        otherwise: `r${i}`,
      };
      nodes[`l${i}`] = {
        id: `l${i}`,
        kind: "sequence",
        children: [`la${i}`, next],
      };
      nodes[`r${i}`] = {
        id: `r${i}`,
        kind: "sequence",
        children: [`ra${i}`, next],
      };
      nodes[`la${i}`] = action(`la${i}`);
      nodes[`ra${i}`] = action(`ra${i}`);
    }
    nodes.end = stop("end");
    return packageOf(nodes, "b0");
  },
  /** A sequence listing the same child twice, `n` levels deep (2^n visits). */
  listedTwice(n) {
    const nodes: Record<string, IrNode> = {};
    for (let i = 0; i < n; i++) {
      const next = i + 1 < n ? `q${i + 1}` : "a";
      nodes[`q${i}`] = {
        id: `q${i}`,
        kind: "sequence",
        children: [next, next],
      };
    }
    nodes.a = action("a");
    return packageOf(nodes, "q0");
  },
  /** A child named after an `Object.prototype` property. */
  prototypeChild() {
    return packageOf({
      root: { id: "root", kind: "sequence", children: ["a", "constructor"] },
      a: action("a"),
    }, "root");
  },
};
