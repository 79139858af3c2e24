/**
 * The table of forms: the one place a package's form is decided
 * ({@linkcode formOf}), the forms `compile --form` names
 * ({@linkcode formNamed}), the order `--form auto` tries them in
 * ({@linkcode AUTO_ORDER}), and what a run of either returns
 * ({@linkcode PackageRun}, {@linkcode describeRun}). A third form is a row
 * here and a folder beside `tree/` and `agent/`.
 *
 * @module
 */
import type { BehaviorIr } from "../package/ir.ts";
import type { BehaviorPackage } from "../package/package.ts";
import type { FormName } from "./form.ts";
import { TREE_FORM } from "./tree/tree_form.ts";
import { AGENT_FORM } from "./agent/agent_form.ts";
import type { RunResult } from "./tree/tree_run_types.ts";
import type { ConversationRun } from "./agent/run_conversation.ts";

/** Either form. */
export type AnyForm = typeof TREE_FORM | typeof AGENT_FORM;

/** The forms by name. */
export const FORMS: {
  readonly tree: typeof TREE_FORM;
  readonly agent: typeof AGENT_FORM;
} = {
  tree: TREE_FORM,
  agent: AGENT_FORM,
};

/**
 * The order `--form auto` tries the forms in: each is kept when it
 * verifies clean, the last one whatever its verification.
 */
export const AUTO_ORDER: readonly AnyForm[] = [TREE_FORM, AGENT_FORM];

/** What a run did, in the package's form. */
export type PackageRun =
  | { form: "tree"; result: RunResult }
  | { form: "agent"; result: ConversationRun };

/**
 * A package's form, from its IR (its root's kind).
 *
 * @param ir The package's IR.
 * @returns The form that runs it.
 */
export function formOf(ir: BehaviorIr): AnyForm {
  return AGENT_FORM.owns(ir) ? AGENT_FORM : TREE_FORM;
}

/**
 * A form by its name.
 *
 * @param name `tree` or `agent`.
 * @returns The form.
 * @throws {TypeError} For any other name.
 */
export function formNamed(name: string): AnyForm {
  if (!Object.hasOwn(FORMS, name)) {
    throw new TypeError(
      `Unknown form "${name}": expected one of ${
        Object.keys(FORMS).join(", ")
      } (or auto)`,
    );
  }
  return FORMS[name as FormName];
}

/**
 * Describe a run for people, a line each, in its form's words.
 *
 * @param run The run.
 * @param pkg The package.
 * @returns The lines.
 */
export function describeRun(run: PackageRun, pkg: BehaviorPackage): string[] {
  return run.form === "tree"
    ? FORMS.tree.describe(run.result, pkg)
    : FORMS.agent.describe(run.result, pkg);
}
