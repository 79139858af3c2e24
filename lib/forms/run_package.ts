/**
 * {@linkcode runPackage}: run any compiled package, whichever its form. The
 * form is the package's (`formOf`, from its IR's root), never a flag, and
 * the form runs it (`Form.run`): the tree form once on an input, its
 * residual leaves answered by a model binding; the agent form as a
 * conversation over a stream of user messages with a chat model.
 *
 * @module
 */
import type { BehaviorPackage } from "../package/package.ts";
import { EmptyPackageError } from "../package/empty_package.ts";
import { isTool } from "../runtime/bind_args.ts";
import { MissingCapabilityError } from "../runtime/runtime_types.ts";
import { irTools, isEmptyIr } from "./validate_package.ts";
import {
  FORM_TABLE,
  type FormTable,
  type PackageCapabilities,
  type PackageRun,
  type RunPackageOptions,
} from "./form_table.ts";

/**
 * Refuse, before anything runs, a package that calls a tool the
 * capabilities do not bind: every tool its manifest lists and every tool
 * its IR calls (`irTools`), so a package whose IR names a tool its
 * manifest leaves out is caught here too when it was never validated.
 *
 * @param pkg The package.
 * @param tools The bound tools.
 * @param table The forms it may be of.
 * @throws {MissingCapabilityError} Naming every unbound tool.
 */
export function checkCapabilities(
  pkg: BehaviorPackage,
  tools: PackageCapabilities["tools"],
  table: FormTable = FORM_TABLE,
): void {
  const needed = new Set(pkg.manifest.required_capabilities);
  for (const { tool } of irTools(pkg.ir, table)) needed.add(tool);
  const missing = [...needed].filter((t) =>
    !Object.hasOwn(tools, t) || !isTool(tools[t])
  );
  if (missing.length) throw new MissingCapabilityError(missing);
}

/**
 * Run a package in its form.
 *
 * @param pkg A validated package.
 * @param caps Tools (and schemas, instructions, input, model, outcome).
 * @param options The chat model, the form's own options (the user's messages of a conversation), tracing.
 * @param table The forms it may be of (the forms in `FORMS` by default).
 * @returns The run.
 * @throws {TypeError} A conversation form's package with no chat model.
 * @throws {MissingCapabilityError} A tool or model the package needs is not bound.
 * @throws {EmptyPackageError} A package that would do nothing.
 * @throws {PackageError} A package no form of the table runs.
 */
export async function runPackage(
  pkg: BehaviorPackage,
  caps: PackageCapabilities,
  options: RunPackageOptions = {},
  table: FormTable = FORM_TABLE,
): Promise<PackageRun> {
  if (isEmptyIr(pkg.ir, table)) {
    throw new EmptyPackageError(
      `${pkg.manifest.name} does nothing of its own: its IR has no tool call, leaf, lookup or choice (an empty package); recompile it from more sessions of the task`,
    );
  }
  checkCapabilities(pkg, caps.tools, table);
  const form = table.formOf(pkg.ir);
  const result = await form.run(pkg, caps, options);
  // The result is the form's own: `form` names which (a row of the table).
  return { form: form.name, result } as PackageRun;
}
