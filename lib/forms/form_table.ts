/**
 * The table of forms: the one place that names the forms. A row of
 * {@linkcode FORMS} is a form (its folder's `Form`); {@linkcode FormTable}
 * scans the rows: a package's form ({@linkcode formOf}: the row that owns
 * its IR's root), the form `compile --form` names ({@linkcode formNamed}),
 * the order `--form auto` tries them in ({@linkcode AUTO_ORDER}), every
 * form's node kinds ({@linkcode NODE_KINDS}), and how a run is described
 * ({@linkcode describeRun}). Beside the rows, the types a caller of every
 * form takes (options, capabilities, a run, a node) are the forms' own
 * put together. A third form is a folder beside `tree/` and `agent/` and
 * a row here.
 *
 * @module
 */
import type { BehaviorIr } from "../package/ir.ts";
import { NodeKinds } from "../package/node_kind.ts";
import type { BehaviorPackage } from "../package/package.ts";
import { PackageError } from "../package/package_error.ts";
import type { Form } from "./form.ts";
import {
  TREE_FORM,
  type TreeCapabilities,
  type TreeCompileOptions,
  type TreeRunOptions,
} from "./tree/tree_form.ts";
import type { TreeNode } from "./tree/tree_nodes.ts";
import type { RunResult } from "./tree/tree_run_types.ts";
import { AGENT_FORM, type AgentCompileOptions } from "./agent/agent_form.ts";
import type { AgentFormNode } from "./agent/agent_nodes.ts";
import type {
  AgentCapabilities,
  AgentRunOptions,
  ConversationRun,
} from "./agent/run_conversation.ts";

/**
 * The forms by name, in the order `--form auto` tries them: each is kept
 * when it verifies clean, the last one whatever its verification.
 */
export const FORMS: {
  readonly tree: typeof TREE_FORM;
  readonly agent: typeof AGENT_FORM;
} = {
  tree: TREE_FORM,
  agent: AGENT_FORM,
};

/** The forms' names (`--form`, a run's `form`). */
export type FormName = keyof typeof FORMS;

/** Every form's own compile options, for a caller that may build any of them. */
export type FormOptions = TreeCompileOptions & AgentCompileOptions;

/** What a package is run with: every form's capabilities. */
export type PackageCapabilities = TreeCapabilities & AgentCapabilities;

/** Options of a run (`runPackage`): every form's. */
export type RunPackageOptions = TreeRunOptions & AgentRunOptions;

/** A node of any form's IR. */
export type AnyNode = TreeNode | AgentFormNode;

/** What a run did, in the package's form. */
export type PackageRun =
  | { form: "tree"; result: RunResult }
  | { form: "agent"; result: ConversationRun };

/**
 * An IR's nodes as the records of the table's forms (a caller that reads
 * a node's own fields narrows on its kind).
 *
 * @param ir An IR.
 * @returns Its nodes by id.
 */
export function anyNodes(
  ir: { nodes: Record<string, unknown> },
): Record<string, AnyNode> {
  return ir.nodes as Record<string, AnyNode>;
}

/**
 * A table of forms: scans its rows for a package's form, a form's name,
 * and every form's node kinds.
 */
export class FormTable {
  /** The forms, in the order `--form auto` tries them. */
  readonly forms: readonly Form[];
  /** Every form's node kinds. */
  readonly kinds: NodeKinds;

  /**
   * A table of these forms.
   *
   * @param forms The forms, in the order `--form auto` tries them.
   * @throws {TypeError} Two forms with one name, or one node kind in two forms.
   */
  constructor(forms: readonly Form[]) {
    const names = new Set<string>();
    for (const f of forms) {
      if (names.has(f.name)) {
        throw new TypeError(`Two forms are named "${f.name}"`);
      }
      names.add(f.name);
    }
    this.forms = [...forms];
    this.kinds = new NodeKinds(forms.flatMap((f) => [...f.kinds]));
  }

  /** The forms' names, in order. */
  get names(): string[] {
    return this.forms.map((f) => f.name);
  }

  /**
   * The form that owns an IR (its root's kind), when one does.
   *
   * @param ir A package's IR.
   * @returns The form, or undefined.
   */
  find(ir: BehaviorIr): Form | undefined {
    return this.forms.find((f) => f.owns(ir));
  }

  /**
   * A package's form, from its IR (its root's kind).
   *
   * @param ir The package's IR.
   * @returns The form that runs it.
   * @throws {PackageError} When no form owns its root.
   */
  formOf(ir: BehaviorIr): Form {
    const form = this.find(ir);
    if (form) return form;
    const root = ir.nodes[ir.root];
    throw new PackageError(
      `No form runs this package: its root ${ir.root} is ${
        root ? `a ${root.kind} node` : "missing"
      }, and the forms (${
        this.names.join(", ")
      }) each start from their own; compile it again`,
    );
  }

  /**
   * A form by its name.
   *
   * @param name A row's name.
   * @returns The form.
   * @throws {TypeError} For any other name.
   */
  formNamed(name: string): Form {
    const form = this.forms.find((f) => f.name === name);
    if (!form) {
      throw new TypeError(
        `Unknown form "${name}": expected one of ${
          this.names.join(", ")
        } (or auto)`,
      );
    }
    return form;
  }
}

/** The table of the forms in {@linkcode FORMS}. */
export const FORM_TABLE: FormTable = new FormTable(Object.values(FORMS));

/** Every form's node kinds. */
export const NODE_KINDS: NodeKinds = FORM_TABLE.kinds;

/**
 * The order `--form auto` tries the forms in: each is kept when it
 * verifies clean, the last one whatever its verification.
 */
export const AUTO_ORDER: readonly Form[] = FORM_TABLE.forms;

/**
 * A package's form, from its IR (its root's kind): the row that owns it.
 *
 * @param ir The package's IR.
 * @returns The form that runs it.
 * @throws {PackageError} When no form owns its root.
 */
export function formOf(ir: BehaviorIr): Form {
  return FORM_TABLE.formOf(ir);
}

/**
 * A form by its name.
 *
 * @param name `tree` or `agent`.
 * @returns The form.
 * @throws {TypeError} For any other name.
 */
export function formNamed(name: string): Form {
  return FORM_TABLE.formNamed(name);
}

/**
 * Describe a run for people, a line each, in its form's words.
 *
 * @param run The run.
 * @param pkg The package.
 * @returns The lines.
 */
export function describeRun(run: PackageRun, pkg: BehaviorPackage): string[] {
  return formNamed(run.form).describe(run.result, pkg);
}
