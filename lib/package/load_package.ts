/**
 * Loading a behavior package: shape, version, digest, the tools it calls
 * and structure are checked before anything can run; a bad or tampered
 * package is refused with a clear error.
 *
 * @module
 */
import type { BehaviorPackage } from "./package.ts";
import { PACKAGE_VERSION } from "./package.ts";
import { packageDigest } from "./package_signature.ts";
import { type BehaviorIr, IR_VERSION, type IrNode } from "./ir.ts";
import { checkStructure } from "./structure_check.ts";

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
      if (
        typeof node.signature !== "string" || !Array.isArray(node.tools) ||
        !node.tools.every((t) => typeof t?.tool === "string")
      ) {
        fail(`choice ${id} needs signature and tools, each naming its tool`);
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
 * Every tool the IR calls for certain, with the node that calls it: action,
 * lookup and choice nodes. (A react leaf's toolset and a choice leaf's
 * `unseen_tools` are offered only when bound, so they are not listed.)
 *
 * @param ir The IR (its nodes already shape-checked).
 * @returns Node and tool, in node order.
 */
export function irTools(ir: BehaviorIr): { node: string; tool: string }[] {
  const out: { node: string; tool: string }[] = [];
  for (const [id, n] of Object.entries(ir.nodes)) {
    if (n.kind === "action" || n.kind === "lookup") {
      out.push({ node: id, tool: n.tool });
    } else if (n.kind === "choice") {
      for (const t of n.tools) out.push({ node: id, tool: t.tool });
    }
  }
  return out;
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
 * @returns The package.
 * @throws {PackageError} Naming the first thing wrong.
 */
export function checkPackageShape(doc: unknown): BehaviorPackage {
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
  for (const [id, n] of Object.entries(ir.nodes)) checkNode(id, n);
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
  for (const { node, tool } of irTools(pkg.ir)) {
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
 * @returns The package.
 * @throws {PackageError} When its shape, version, digest or structure is
 * wrong, or its IR calls a tool its manifest does not list.
 */
export function validatePackage(doc: unknown): BehaviorPackage {
  checkVersion(doc);
  const digest = doc.digest;
  if (typeof digest !== "string") fail("no digest");
  const actual = packageDigest(doc);
  if (actual !== digest) {
    throw new PackageError(
      `Behavior package digest mismatch: it says ${digest} but its content hashes to ${actual}; the package was altered after it was built — rebuild it with compile.ts`,
    );
  }
  const pkg = checkPackageShape(doc);
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
