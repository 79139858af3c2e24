/**
 * The contract of a node kind ({@linkcode NodeKind}): what the package
 * layer asks of every kind of IR node, whichever form defines it (how its
 * shape is checked, which nodes are its children, what its structure check
 * reads and writes, which tools it calls, how it is described), and
 * {@linkcode NodeKinds}, a set of kinds the generic checks and renderings
 * run over. The forms define their kinds in their own folders; the table
 * of forms (`lib/forms/form_table.ts`) holds every form's kinds.
 *
 * @module
 */
import type { BehaviorIr, IrNode, Signature } from "./ir.ts";

/**
 * What a node's structure check sees of the walk (`checkStructure`): the
 * stores and variables written so far on the node's path, and where its
 * problems go.
 */
export interface StructureScope {
  /**
   * A path the node reads must read a store or variable already written
   * on its path (and its `[$variable]` parts variables already set).
   *
   * @param path The path.
   * @param where Where it is read, for the problem (`node.arg`).
   */
  needs(path: string, where: string): void;
  /**
   * A store or variable the node writes: in scope for what follows it.
   *
   * @param key The store or variable.
   */
  writes(key: string): void;
  /**
   * A tool the node calls must be in the capability set (when one is given).
   *
   * @param node The node id.
   * @param tool The tool.
   */
  tool(node: string, tool: string): void;
  /**
   * The signature a node names; a problem when the package lacks it.
   *
   * @param node The node id.
   * @param name The signature id.
   * @returns The signature, or undefined when it is missing.
   */
  signature(node: string, name: string): Signature | undefined;
  /**
   * Report a problem.
   *
   * @param text One sentence.
   */
  problem(text: string): void;
}

/**
 * One kind of IR node, as its form defines it. The package layer walks,
 * checks and describes nodes only through this contract.
 *
 * @typeParam N The kind's node type.
 */
export interface NodeKind<N extends IrNode = IrNode> {
  /** The kind's name (the node's `kind`). */
  readonly kind: string;
  /**
   * Whether a node of this kind does something of the package's own when
   * it runs (a tool call, a model leaf); an IR with no such node is an
   * empty package.
   */
  readonly works: boolean;
  /**
   * Whether each child starts from the node's own scope (a branch's arms):
   * what one child writes is not in scope for the next nor after the node.
   * When false, children run in order and each sees what the earlier ones
   * wrote (a sequence).
   * @default false
   */
  readonly scoped?: boolean;
  /**
   * Whether several of its child slots may name the same node (arms of a
   * branch that lead to one node); else a child listed twice is a problem.
   * @default false
   */
  readonly sharesChildren?: boolean;
  /**
   * Whether the node only orders its children, so explain shows no
   * evidence of its own.
   * @default false
   */
  readonly ordersOnly?: boolean;
  /**
   * What is wrong with a node's fields (the package is refused when
   * anything is): a sentence naming the node, or null when sound.
   *
   * @param node The node (its `id` and `kind` already checked).
   * @returns The problem, or null.
   */
  shapeProblem(node: N): string | null;
  /**
   * Its children in tree order (none when absent).
   *
   * @param node The node.
   * @returns Child node ids.
   */
  children?(node: N): readonly string[];
  /**
   * The tools it calls for certain (tools it only may offer are left out).
   *
   * @param node The node.
   * @returns Tool names.
   */
  tools?(node: N): readonly string[];
  /**
   * Its structure check, against the scope it is entered with: what it
   * reads must be in scope, what it writes is added, the tools it calls
   * and the signatures it names must exist.
   *
   * @param node The node.
   * @param scope The walk's scope.
   */
  check?(node: N, scope: StructureScope): void;
  /**
   * Where the node's effects disagree with the manifest's.
   *
   * @param node The node.
   * @param effectOf The manifest's effect of a tool (undefined: not listed).
   * @returns One sentence per disagreement.
   */
  effectProblems?(
    node: N,
    effectOf: (tool: string) => string | undefined,
  ): string[];
  /**
   * A one-line description, in the compiler's terms.
   *
   * @param node The node.
   * @returns Text.
   */
  describe(node: N): string;
  /**
   * More lines explain shows under the node (a leaf's instructions).
   *
   * @param node The node.
   * @param signatures The package's signatures.
   * @returns Lines (none when absent).
   */
  details?(node: N, signatures: Record<string, Signature>): string[];
}

/**
 * A set of node kinds (one form's, or every form's in the table): the
 * lookups the generic checks and renderings make.
 */
export class NodeKinds {
  readonly #kinds = new Map<string, NodeKind>();

  /**
   * Gather node kinds.
   *
   * @param kinds The kinds (each form's list, concatenated).
   * @throws {TypeError} When two kinds have one name.
   */
  constructor(kinds: Iterable<NodeKind>) {
    for (const k of kinds) {
      if (this.#kinds.has(k.kind)) {
        throw new TypeError(
          `Node kind "${k.kind}" is defined twice: each kind belongs to one form`,
        );
      }
      this.#kinds.set(k.kind, k);
    }
  }

  /** The kinds' names, in the order given. */
  get names(): string[] {
    return [...this.#kinds.keys()];
  }

  /**
   * The kinds, in the order given.
   *
   * @returns An iterator over them.
   */
  [Symbol.iterator](): IterableIterator<NodeKind> {
    return this.#kinds.values();
  }

  /**
   * A kind by name.
   *
   * @param kind The name.
   * @returns The kind, or undefined when no kind here has that name.
   */
  get(kind: unknown): NodeKind | undefined {
    return typeof kind === "string" ? this.#kinds.get(kind) : undefined;
  }

  /**
   * Whether a kind is here.
   *
   * @param kind The name.
   * @returns True when it is.
   */
  has(kind: unknown): boolean {
    return this.get(kind) !== undefined;
  }

  /**
   * A node's children in tree order (none for a kind not here).
   *
   * @param node The node.
   * @returns Child node ids.
   */
  children(node: IrNode): readonly string[] {
    return this.get(node.kind)?.children?.(node) ?? [];
  }

  /**
   * A one-line description of a node.
   *
   * @param node The node.
   * @returns Text.
   */
  describe(node: IrNode): string {
    const k = this.get(node.kind);
    return k ? k.describe(node) : `a ${node.kind} node, of no known form`;
  }

  /**
   * Every tool the IR calls for certain, with the node that calls it, in
   * node order.
   *
   * @param ir The IR (its nodes already shape-checked).
   * @returns Node and tool.
   */
  tools(ir: BehaviorIr): { node: string; tool: string }[] {
    const out: { node: string; tool: string }[] = [];
    for (const [id, n] of Object.entries(ir.nodes)) {
      for (const tool of this.get(n.kind)?.tools?.(n) ?? []) {
        out.push({ node: id, tool });
      }
    }
    return out;
  }

  /**
   * Whether an IR does nothing of its own: no node of a working kind.
   *
   * @param ir The IR.
   * @returns True when running it would call nothing.
   */
  isEmpty(ir: BehaviorIr): boolean {
    return !Object.values(ir.nodes).some((n) => this.get(n.kind)?.works);
  }
}
