/**
 * Loading a behavior package: shape, version, digest, the tools it calls
 * and structure are checked before anything can run; a bad or tampered
 * package is refused with a clear error. Each node is checked by its kind,
 * whichever form it belongs to (every form's kinds, from the table).
 *
 * @module
 */
import type { BehaviorPackage } from "../package/package.ts";
import { PACKAGE_VERSION } from "../package/package.ts";
import { packageDigest } from "../package/package_signature.ts";
import { type BehaviorIr, IR_VERSION, type IrNode } from "../package/ir.ts";
import { checkStructure } from "../package/structure_check.ts";
import { PackageError } from "../package/package_error.ts";
import { FORM_TABLE, type FormTable } from "./form_table.ts";

export { PackageError };

function fail(what: string): never {
  throw new PackageError(`Invalid behavior package: ${what}`);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkNode(id: string, n: unknown, table: FormTable): void {
  if (!isObj(n)) fail(`node ${id} is not an object`);
  if (n.id !== id) fail(`node ${id} carries id ${JSON.stringify(n.id)}`);
  const kind = table.kinds.get(n.kind);
  if (!kind) fail(`node ${id} has unknown kind ${JSON.stringify(n.kind)}`);
  const problem = kind.shapeProblem(n as IrNode);
  if (problem) fail(problem);
}

/**
 * Every tool the IR calls for certain, with the node that calls it (each
 * node kind's `tools`: a tree's actions, an agent form's lookups and
 * choice). A react leaf's toolset and a choice leaf's `unseen_tools` are
 * offered only when bound, so they are not listed.
 *
 * @param ir The IR (its nodes already shape-checked).
 * @param table The forms whose node kinds it may hold.
 * @returns Node and tool, in node order.
 */
export function irTools(
  ir: BehaviorIr,
  table: FormTable = FORM_TABLE,
): { node: string; tool: string }[] {
  return table.kinds.tools(ir);
}

/**
 * Whether an IR does nothing of its own: no tool call, residual leaf,
 * lookup or choice (no node of a kind that works; a bare `agent` node
 * leaves everything to the model).
 *
 * @param ir The IR.
 * @param table The forms whose node kinds it may hold.
 * @returns True when running it would call nothing.
 */
export function isEmptyIr(
  ir: BehaviorIr,
  table: FormTable = FORM_TABLE,
): boolean {
  return table.kinds.isEmpty(ir);
}

/** A signature's shape (whether it verifies is `checkTrust`'s question: it is async). */
function checkSignatureShape(s: unknown): void {
  if (
    !isObj(s) || typeof s.alg !== "string" || typeof s.key !== "string" ||
    typeof s.value !== "string"
  ) {
    fail("signature must be {alg, key, value}");
  }
}

function checkVersion(doc: unknown): asserts doc is Record<string, unknown> {
  if (!isObj(doc)) fail("not a JSON object");
  if (doc.schema_version !== PACKAGE_VERSION) {
    fail(
      `schema_version ${
        JSON.stringify(doc.schema_version)
      }, expected "${PACKAGE_VERSION}"`,
    );
  }
}

/**
 * Check a package document's shape, leaving out its digest and structure:
 * the version, the IR's nodes, the manifest, that the manifest lists every
 * tool the IR calls ({@linkcode irTools}), a signature's fields.
 *
 * @param doc Parsed JSON.
 * @param table The forms whose node kinds it may hold.
 * @returns The package.
 * @throws {PackageError} Naming the first thing wrong.
 */
export function checkPackageShape(
  doc: unknown,
  table: FormTable = FORM_TABLE,
): BehaviorPackage {
  checkVersion(doc);
  const ir = doc.ir;
  if (!isObj(ir) || ir.schema_version !== IR_VERSION) {
    fail(`ir.schema_version is not "${IR_VERSION}"`);
  }
  if (
    !isObj(ir.nodes) || typeof ir.root !== "string" ||
    !Object.hasOwn(ir.nodes, ir.root)
  ) {
    fail("ir needs nodes and a root among them");
  }
  for (const [id, n] of Object.entries(ir.nodes)) checkNode(id, n, table);
  if (!isObj(doc.signatures) || !isObj(doc.manifest)) {
    fail("signatures and manifest are required");
  }
  if (typeof doc.digest !== "string") fail("no digest");
  const pkg = doc as unknown as BehaviorPackage;
  const listed = pkg.manifest.required_capabilities as unknown;
  if (!Array.isArray(listed) || !listed.every((t) => typeof t === "string")) {
    fail("manifest.required_capabilities is not a list of tool names");
  }
  const required = new Set<string>(listed);
  for (const { node, tool } of irTools(pkg.ir, table)) {
    if (!required.has(tool)) {
      fail(
        `node ${node} calls tool "${tool}", which manifest.required_capabilities does not list; the package was changed after it was compiled — rebuild it with compile.ts`,
      );
    }
  }
  if ("signature" in doc) checkSignatureShape(doc.signature);
  return pkg;
}

/**
 * Check a parsed package document: its version, its digest (over the
 * package without `digest` and `signature`), its shape
 * ({@linkcode checkPackageShape}) and its structure (`checkStructure`: a
 * tree without cycles, refs written before they are read, every node
 * reachable). Whether a signature verifies is not checked here (see
 * `checkTrust`).
 *
 * @param doc Parsed JSON.
 * @param table The forms whose node kinds it may hold (every form's in
 *   `FORMS` by default).
 * @returns The package.
 * @throws {PackageError} When its shape, version, digest or structure is
 * wrong, or its IR calls a tool its manifest does not list.
 */
export function validatePackage(
  doc: unknown,
  table: FormTable = FORM_TABLE,
): BehaviorPackage {
  checkVersion(doc);
  const digest = doc.digest;
  if (typeof digest !== "string") fail("no digest");
  const actual = packageDigest(doc);
  if (actual !== digest) {
    throw new PackageError(
      `Behavior package digest mismatch: it says ${digest} but its content hashes to ${actual}; the package was altered after it was built — rebuild it with compile.ts`,
    );
  }
  const pkg = checkPackageShape(doc, table);
  const problems = checkStructure(
    { ir: pkg.ir, signatures: pkg.signatures },
    null,
    table.kinds,
  );
  if (problems.length) fail(`structure: ${problems.slice(0, 3).join("; ")}`);
  return pkg;
}

/**
 * Read and check a package file.
 *
 * @param path File path.
 * @param table The forms whose node kinds it may hold.
 * @returns The package.
 * @throws {PackageError} When it cannot be read or is not valid.
 */
export function loadPackage(
  path: string,
  table: FormTable = FORM_TABLE,
): BehaviorPackage {
  let doc: unknown;
  try {
    doc = JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new PackageError(
      `Cannot read the behavior package ${path}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return validatePackage(doc, table);
}
