/**
 * The structural check of a compiled behavior, for either form: the IR is
 * a tree without cycles, refs resolve to stores written earlier, tools
 * exist, no node is unreachable, signatures are typed. One iterative walk,
 * linear in the size of the IR whatever its shape.
 *
 * @module
 */
import { parsePath } from "../lineage/paths.ts";
import type { CompiledBehavior, IrNode, Signature } from "./ir.ts";

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
  /** Its children (a branch's arms, an agent's lookups and choice). */
  list: readonly string[];
  /** The next child. */
  next: number;
  /** Their depth. */
  depth: number;
  /** The scope to restore before each arm and after the last (-1: a sequence, none). */
  undo: number;
}

const VAR_IN_PATH = /\[\$([^\]]+)\]/g;
const REF_IN_TEMPLATE = /\$ref\(([^)]*)\)/g;

/** The walk of {@linkcode checkStructure}: each node once, iteratively. */
class StructureWalk {
  readonly problems = new Problems();
  readonly #ir: CompiledBehavior["ir"];
  readonly #signatures: Record<string, Signature>;
  readonly #caps: Set<string> | null;
  readonly #scope = new Scope();
  /** Each node reached, with the parent it was reached from. */
  readonly #parentOf = new Map<string, string | null>();
  #tooDeep = false;

  constructor(
    compiled: Pick<CompiledBehavior, "ir" | "signatures">,
    caps: Set<string> | null,
  ) {
    this.#ir = compiled.ir;
    this.#signatures = compiled.signatures;
    this.#caps = caps;
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
      if (parent.kind !== "branch") {
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
    const list = n.kind === "sequence"
      ? n.children
      : n.kind === "branch"
      ? [...n.cases.map((c) => c.then), n.otherwise]
      : n.kind === "agent"
      ? (n.choice ? [...n.lookups, n.choice] : n.lookups)
      : [];
    if (list.length === 0) return null;
    // Arms of a branch and the parts of an agent each start from the
    // node's own scope: what one writes is not visible after it.
    const undo = n.kind === "sequence" ? -1 : this.#scope.mark();
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

  /** Check one node against the scope it is entered with; add what it writes. */
  #check(n: IrNode): void {
    const id = n.id;
    switch (n.kind) {
      case "action":
        this.#tool(id, n.tool);
        for (const arg in n.args) {
          const e = n.args[arg];
          if ("ref" in e) this.#needs(e.ref, `${id}.${arg}`);
          if ("template" in e) {
            for (const m of e.template.matchAll(REF_IN_TEMPLATE)) {
              this.#needs(m[1], `${id}.${arg}`);
            }
          }
        }
        this.#scope.add(n.store);
        return;
      case "predict": {
        const sig = this.#signature(id, n.signature);
        for (const [name, f] of Object.entries(sig?.outputs ?? {})) {
          if (!f.type) this.problems.push(`${id}: output ${name} has no type`);
        }
        for (const p of Object.values(n.inputs)) this.#needs(p, `${id} input`);
        for (const v of Object.values(n.outputs)) this.#scope.add(v);
        return;
      }
      case "react":
        this.#signature(id, n.signature);
        this.#scope.add(n.store);
        return;
      case "branch":
        this.#needs(n.on, id);
        return;
      case "lookup":
        this.#tool(id, n.tool);
        return;
      case "choice":
        this.#signature(id, n.signature);
        for (const t of n.tools) this.#tool(id, t.tool);
        return;
    }
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
 * @returns Problems, one sentence each.
 */
export function checkStructure(
  compiled: Pick<CompiledBehavior, "ir" | "signatures">,
  caps: Set<string> | null,
): string[] {
  return new StructureWalk(compiled, caps).run();
}
