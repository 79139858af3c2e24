/**
 * The structural check of a compiled behavior, for any form: the IR is a
 * tree without cycles, refs resolve to stores written earlier, tools
 * exist, no node is unreachable, signatures are typed. One iterative walk,
 * linear in the size of the IR whatever its shape; what each node reads,
 * writes and names is its kind's to say (`NodeKind.check`).
 *
 * @module
 */
import { parsePath } from "../lineage/paths.ts";
import type { CompiledBehavior, IrNode, Signature } from "./ir.ts";
import type { NodeKinds, StructureScope } from "./node_kind.ts";

/**
 * Deepest nesting of IR nodes {@linkcode checkStructure} accepts: the tree
 * engine walks a package recursively (it overflows the stack near 2,000),
 * and no compiled tree comes near it.
 */
export const MAX_IR_DEPTH = 512;

/** Most problems {@linkcode checkStructure} lists; one more line counts the rest. */
export const MAX_STRUCTURE_PROBLEMS = 200;

/**
 * A scope: the stores and variables written so far on the path, with an
 * undo log kept while a mark is open (nothing to undo below every mark).
 */
class Scope {
  readonly #keys = new Set<string>();
  readonly #added: string[] = [];
  #open = 0;

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  add(key: string): void {
    if (this.#keys.has(key)) return;
    this.#keys.add(key);
    if (this.#open) this.#added.push(key);
  }

  /** Open a mark: a point to roll back to. */
  mark(): number {
    this.#open++;
    return this.#added.length;
  }

  /** Forget what was written since `mark`. */
  rollback(mark: number): void {
    while (this.#added.length > mark) this.#keys.delete(this.#added.pop()!);
  }

  /** Close the last mark (after its last rollback). */
  release(): void {
    this.#open--;
  }
}

/** Problems, at most {@linkcode MAX_STRUCTURE_PROBLEMS} of them kept. */
class Problems {
  readonly list: string[] = [];
  more = 0;

  get full(): boolean {
    return this.list.length >= MAX_STRUCTURE_PROBLEMS;
  }

  push(problem: string): void {
    if (this.full) this.more++;
    else this.list.push(problem);
  }

  done(): string[] {
    return this.more
      ? [...this.list, `… and ${this.more} more problems`]
      : this.list;
  }
}

/** The children of one node being walked, in order. */
interface Cursor {
  /** The node. */
  node: IrNode;
  /** Its children (its kind's `children`). */
  list: readonly string[];
  /** The next child. */
  next: number;
  /** Their depth. */
  depth: number;
  /** The scope to restore before each child and after the last (-1: not scoped, none). */
  undo: number;
}

const VAR_IN_PATH = /\[\$([^\]]+)\]/g;

/** The walk of {@linkcode checkStructure}: each node once, iteratively. */
class StructureWalk {
  readonly problems = new Problems();
  readonly #ir: CompiledBehavior["ir"];
  readonly #signatures: Record<string, Signature>;
  readonly #caps: Set<string> | null;
  readonly #kinds: NodeKinds;
  readonly #scope = new Scope();
  /** What a node's kind sees of the walk. */
  readonly #view: StructureScope = {
    needs: (path, where) => this.#needs(path, where),
    writes: (key) => this.#scope.add(key),
    tool: (node, tool) => this.#tool(node, tool),
    signature: (node, name) => this.#signature(node, name),
    problem: (text) => this.problems.push(text),
  };
  /** Each node reached, with the parent it was reached from. */
  readonly #parentOf = new Map<string, string | null>();
  #tooDeep = false;

  constructor(
    compiled: Pick<CompiledBehavior, "ir" | "signatures">,
    caps: Set<string> | null,
    kinds: NodeKinds,
  ) {
    this.#ir = compiled.ir;
    this.#signatures = compiled.signatures;
    this.#caps = caps;
    this.#kinds = kinds;
    this.#scope.add("input");
  }

  run(): string[] {
    const stack: Cursor[] = [];
    const visit = (id: string, parent: IrNode | null, depth: number) => {
      const n = this.#enter(id, parent, depth);
      const c = n && this.#cursor(n, depth + 1);
      if (c) stack.push(c);
    };
    visit(this.#ir.root, null, 1);
    while (stack.length) {
      const c = stack[stack.length - 1];
      if (c.undo >= 0 && c.next > 0) this.#scope.rollback(c.undo);
      if (c.next < c.list.length) visit(c.list[c.next++], c.node, c.depth);
      else {
        stack.pop();
        if (c.undo >= 0) this.#scope.release();
      }
    }
    const ids = Object.keys(this.#ir.nodes);
    if (ids.length !== this.#parentOf.size) {
      for (const id of ids) {
        if (!this.#parentOf.has(id)) {
          this.problems.push(`node ${id} is unreachable`);
        }
      }
    }
    return this.problems.done();
  }

  /** The node when it is there and reached for the first time (then checked), else null. */
  #enter(id: string, parent: IrNode | null, depth: number): IrNode | null {
    if (!Object.hasOwn(this.#ir.nodes, id)) {
      this.problems.push(`node ${id} is referenced but missing`);
      return null;
    }
    if (this.#parentOf.has(id)) {
      this.#reachedAgain(id, parent);
      return null;
    }
    this.#parentOf.set(id, parent?.id ?? null);
    if (depth > MAX_IR_DEPTH && !this.#tooDeep) {
      this.#tooDeep = true;
      this.problems.push(
        `node ${id} is nested ${depth} deep, deeper than ${MAX_IR_DEPTH}`,
      );
    }
    const n = this.#ir.nodes[id];
    this.#check(n);
    return n;
  }

  /**
   * A node reached a second time: an arm several cases of one branch
   * share (fine), a child listed twice, a cycle, or a second parent.
   */
  #reachedAgain(id: string, parent: IrNode | null): void {
    const first = this.#parentOf.get(id);
    if (parent !== null && first === parent.id) {
      if (!this.#kinds.get(parent.kind)?.sharesChildren) {
        this.problems.push(`${parent.kind} ${parent.id} lists ${id} twice`);
      }
      return;
    }
    if (this.problems.full) {
      this.problems.more++;
      return;
    }
    const cycle = parent === null ? null : this.#cycle(parent.id, id);
    this.problems.push(
      cycle
        ? `node ${id} is its own descendant (${
          cycle.join(" → ")
        }): the IR must be a tree, without cycles`
        : `node ${id} is a child of both ${first} and ${parent?.id}: the IR must be a tree`,
    );
  }

  /** `to → … → from → to` when `to` is an ancestor of `from` (or itself), else null. */
  #cycle(from: string, to: string): string[] | null {
    if (from === to) return [to, to];
    const path = [from];
    for (
      let p = this.#parentOf.get(from);
      p != null;
      p = this.#parentOf.get(p)
    ) {
      path.push(p);
      if (p === to) return [...path.reverse(), to];
    }
    return null;
  }

  /** A cursor over a node's children, or null when it has none. */
  #cursor(n: IrNode, depth: number): Cursor | null {
    const list = this.#kinds.children(n);
    if (list.length === 0) return null;
    // The children of a scoped node (a branch's arms) each start from the
    // node's own scope: what one writes is not visible after it.
    const undo = this.#kinds.get(n.kind)?.scoped ? this.#scope.mark() : -1;
    return { node: n, list, next: 0, depth, undo };
  }

  /** A path must read a store or variable already in scope. */
  #needs(path: string, where: string): void {
    let first;
    try {
      first = parsePath(path)[0];
    } catch {
      this.problems.push(`${where}: malformed path ${path}`);
      return;
    }
    const key = first && "key" in first ? first.key : null;
    if (key === null || !this.#scope.has(key)) {
      this.problems.push(
        `${where}: ${path} reads ${key} before anything writes it`,
      );
    }
    if (!path.includes("[$")) return;
    for (const v of path.matchAll(VAR_IN_PATH)) {
      if (!this.#scope.has(v[1])) {
        this.problems.push(`${where}: ${path} uses $${v[1]} before it is set`);
      }
    }
  }

  #tool(id: string, tool: string): void {
    if (this.#caps && !this.#caps.has(tool)) {
      this.problems.push(`${id}: tool ${tool} is not in the capability set`);
    }
  }

  #signature(id: string, name: string): Signature | undefined {
    if (Object.hasOwn(this.#signatures, name)) return this.#signatures[name];
    this.problems.push(`${id}: signature ${name} is missing`);
    return undefined;
  }

  /** Check one node against the scope it is entered with (its kind's check). */
  #check(n: IrNode): void {
    const kind = this.#kinds.get(n.kind);
    if (!kind) {
      this.problems.push(
        `node ${n.id} has kind ${n.kind}, which no form here knows`,
      );
      return;
    }
    kind.check?.(n, this.#view);
  }
}

/**
 * Structural problems of a compiled behavior (empty when sound): the IR is
 * a tree (no cycle, no node under two parents, no child listed twice, at
 * most {@linkcode MAX_IR_DEPTH} deep), refs read stores and variables
 * written earlier on their path, tools are in the capability set, every
 * node is reachable, signatures are typed. One iterative walk visits each
 * node once, so the work is linear in the size of the IR whatever its
 * shape; at most {@linkcode MAX_STRUCTURE_PROBLEMS} problems are listed.
 *
 * @param compiled IR and signatures.
 * @param caps Available tools, or null to skip that check.
 * @param kinds The node kinds the IR may hold (a form's own, or every
 *   form's in the table).
 * @returns Problems, one sentence each.
 */
export function checkStructure(
  compiled: Pick<CompiledBehavior, "ir" | "signatures">,
  caps: Set<string> | null,
  kinds: NodeKinds,
): string[] {
  return new StructureWalk(compiled, caps, kinds).run();
}
