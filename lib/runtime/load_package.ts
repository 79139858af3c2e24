/**
 * Loading a behavior package: shape, version, digest and structure are
 * checked before anything can run; a bad or tampered package is refused
 * with a clear error.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Digest } from "../trace/hash.ts";
import type { BehaviorPackage } from "../compiler/core/package.ts";
import { PACKAGE_VERSION } from "../compiler/core/package.ts";
import { IR_VERSION, type IrNode } from "../compiler/core/ir.ts";
import { checkStructure } from "../compiler/core/verification.ts";

/** A package that cannot be run. */
export class PackageError extends Error {
  /**
   * Create a `PackageError`.
   *
   * @param message What is wrong and what to do.
   * @param options Cause.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PackageError";
  }
}

const KINDS = new Set([
  "sequence",
  "action",
  "branch",
  "predict",
  "react",
  "stop",
  "agent",
  "lookup",
  "choice",
]);

function fail(what: string): never {
  throw new PackageError(`Invalid behavior package: ${what}`);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkAction(id: string, node: IrNode & { kind: "action" }): void {
  if (
    typeof node.tool !== "string" || typeof node.store !== "string" ||
    !isObj(node.args)
  ) {
    fail(`action ${id} needs tool, store and args`);
  }
  for (const [arg, e] of Object.entries(node.args)) {
    const x = e as Record<string, unknown>;
    if (
      !isObj(x) ||
      !("const" in x || typeof x.ref === "string" ||
        typeof x.template === "string")
    ) {
      fail(`action ${id} argument ${arg} is not a const, ref or template`);
    }
  }
}

function checkNode(id: string, n: unknown): void {
  if (!isObj(n)) fail(`node ${id} is not an object`);
  if (n.id !== id) fail(`node ${id} carries id ${JSON.stringify(n.id)}`);
  if (!KINDS.has(n.kind as string)) {
    fail(`node ${id} has unknown kind ${JSON.stringify(n.kind)}`);
  }
  const node = n as IrNode;
  switch (node.kind) {
    case "sequence":
      if (!Array.isArray(node.children)) {
        fail(`sequence ${id} has no children list`);
      }
      break;
    case "action":
      checkAction(id, node);
      break;
    case "branch":
      if (
        typeof node.on !== "string" || !Array.isArray(node.cases) ||
        typeof node.otherwise !== "string"
      ) {
        fail(`branch ${id} needs on, cases and otherwise`);
      }
      break;
    case "predict":
      if (
        typeof node.signature !== "string" || !isObj(node.inputs) ||
        !isObj(node.outputs)
      ) {
        fail(`predict ${id} needs signature, inputs and outputs`);
      }
      break;
    case "react":
      if (
        typeof node.signature !== "string" || !Array.isArray(node.tools) ||
        !(node.max_steps >= 1)
      ) {
        fail(`react ${id} needs signature, tools and max_steps`);
      }
      break;
    case "stop":
      if (typeof node.reason !== "string") fail(`stop ${id} needs a reason`);
      break;
    case "agent":
      if (!Array.isArray(node.lookups) || !(node.fanout >= 1)) {
        fail(`agent ${id} needs lookups and a fanout of at least 1`);
      }
      break;
    case "lookup":
      if (typeof node.tool !== "string" || !Array.isArray(node.args)) {
        fail(`lookup ${id} needs tool and args`);
      }
      break;
    case "choice":
      if (typeof node.signature !== "string" || !Array.isArray(node.tools)) {
        fail(`choice ${id} needs signature and tools`);
      }
      if (
        node.unseen_tools !== undefined &&
        (!Array.isArray(node.unseen_tools) ||
          !node.unseen_tools.every((t) =>
            typeof t?.tool === "string" && typeof t?.effect === "string"
          ))
      ) {
        fail(`choice ${id}: unseen_tools must be a list of {tool, effect}`);
      }
  }
}

/**
 * Check a parsed package document.
 *
 * @param doc Parsed JSON.
 * @returns The package.
 * @throws {PackageError} When its shape, version, digest or structure is wrong.
 */
export function validatePackage(doc: unknown): BehaviorPackage {
  if (!isObj(doc)) fail("not a JSON object");
  if (doc.schema_version !== PACKAGE_VERSION) {
    fail(
      `schema_version ${
        JSON.stringify(doc.schema_version)
      }, expected "${PACKAGE_VERSION}"`,
    );
  }
  const { digest, ...body } = doc;
  if (typeof digest !== "string") fail("no digest");
  const actual = sha256Digest(canonicalJson(body));
  if (actual !== digest) {
    throw new PackageError(
      `Behavior package digest mismatch: it says ${digest} but its content hashes to ${actual}; the package was altered after it was built — rebuild it with compile.ts`,
    );
  }
  const ir = doc.ir;
  if (!isObj(ir) || ir.schema_version !== IR_VERSION) {
    fail(`ir.schema_version is not "${IR_VERSION}"`);
  }
  if (
    !isObj(ir.nodes) || typeof ir.root !== "string" || !(ir.root in ir.nodes)
  ) {
    fail("ir needs nodes and a root among them");
  }
  for (const [id, n] of Object.entries(ir.nodes)) checkNode(id, n);
  if (!isObj(doc.signatures) || !isObj(doc.manifest)) {
    fail("signatures and manifest are required");
  }
  const pkg = doc as unknown as BehaviorPackage;
  if (!Array.isArray(pkg.manifest.required_capabilities)) {
    fail("manifest.required_capabilities is missing");
  }
  const problems = checkStructure(
    { ir: pkg.ir, signatures: pkg.signatures },
    null,
  );
  if (problems.length) fail(`structure: ${problems.slice(0, 3).join("; ")}`);
  return pkg;
}

/**
 * Read and check a package file.
 *
 * @param path File path.
 * @returns The package.
 * @throws {PackageError} When it cannot be read or is not valid.
 */
export function loadPackage(path: string): BehaviorPackage {
  let doc: unknown;
  try {
    doc = JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw new PackageError(
      `Cannot read the behavior package ${path}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return validatePackage(doc);
}
