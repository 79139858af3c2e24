/**
 * The JSON Schemas in `docs/schema/` (linked from docs/compiler.md) against
 * what the code makes: packages compiled here, in both forms, and the
 * golden order-desk package validate; packages broken on purpose do not.
 * The code is the truth: when a package the compiler makes fails here, fix
 * the schema.
 *
 * @module
 */
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { assertEquals, assertOk } from "../_assert.ts";
import {
  type BehaviorPackage,
  compileBehavior,
} from "../../lib/compiler/mod.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { tempDir } from "../_helpers.ts";
import { EmptyPackageError } from "../../lib/package/empty_package.ts";
import { anyNodes } from "../../lib/forms/form_table.ts";
import { compileTraining } from "../compiler/_dataflow.ts";

const ROOT = new URL("../../", import.meta.url);
const IR_SCHEMA = "harness.ir.v1.schema.json";
const PACKAGE_SCHEMA = "harness.package.v1.schema.json";

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(new URL(path, ROOT)));
}

/** A validator holding both schemas (the package schema refers to the IR's). */
function validator(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  ajv.addSchema(readJson(`docs/schema/${IR_SCHEMA}`));
  ajv.addSchema(readJson(`docs/schema/${PACKAGE_SCHEMA}`));
  return ajv;
}

/** The errors of `doc` against the schema `ref`, one line each. */
function errorsOf(ajv: Ajv2020, ref: string, doc: unknown): string[] {
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`No schema ${ref}`);
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) =>
    `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`
  );
}

/**
 * Real packages: the order desk (tree form), τ² retail and telecom, and
 * the recorded Claude Code `dataflow` sessions (a template with a hole).
 */
async function compiledPackages(): Promise<Map<string, BehaviorPackage>> {
  const out = new Map<string, BehaviorPackage>();
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  out.set(
    "order desk",
    compileBehavior(await loadEpisodes(store, "desk"), {
      name: "order_desk",
      effects: DESK_EFFECTS,
    }).package,
  );
  out.set("Claude Code dataflow", (await compileTraining()).package);
  for (const domain of ["retail", "telecom"]) {
    const slice = loadTauData(
      Deno.readTextFileSync(
        new URL(`fixtures/tau2_${domain}_slice.json`, ROOT),
      ),
    );
    const norm = slice.episodes.filter((e) => e.norm.success === true)
      .map((e) => e.norm);
    for (const form of ["auto", "tree", "agent"] as const) {
      let pkg: BehaviorPackage;
      try {
        pkg = compileBehavior(norm, {
          name: domain,
          effects: slice.effects,
          form,
        }).package;
      } catch (err) {
        // A tree of no step is refused (issue #36), not written.
        if (form === "tree" && err instanceof EmptyPackageError) continue;
        throw err;
      }
      out.set(`τ² ${domain} (${form})`, pkg);
    }
    // Few episodes: state-changing tools training never made (`unseen_tools`).
    out.set(
      `τ² ${domain} (agent, 3 episodes)`,
      compileBehavior(norm.slice(0, 3), {
        name: domain,
        effects: slice.effects,
        form: "agent",
      }).package,
    );
  }
  return out;
}

Deno.test("docs/schema: every package compiled here validates against harness.package.v1, and between them they hold every node kind the compiler makes", async () => {
  const ajv = validator();
  const kinds = new Set<string>();
  const forms = new Set<string>();
  let unseen = 0, tuned = 0, holes = 0;
  for (const [name, pkg] of await compiledPackages()) {
    if (pkg.verification.tuning) tuned++;
    for (const node of Object.values(anyNodes(pkg.ir))) {
      if (node.kind === "predict" && node.decides.within) holes++;
    }
    assertEquals(errorsOf(ajv, PACKAGE_SCHEMA, pkg), [], name);
    assertEquals(errorsOf(ajv, IR_SCHEMA, pkg.ir), [], name);
    for (const node of Object.values(anyNodes(pkg.ir))) {
      kinds.add(node.kind);
      if (node.kind === "choice") unseen += node.unseen_tools?.length ?? 0;
    }
    forms.add(pkg.ir.nodes[pkg.ir.root].kind);
  }
  // `react` is run by the runtime but not made by the compiler.
  assertEquals([...kinds].sort(), [
    "action",
    "agent",
    "branch",
    "choice",
    "lookup",
    "predict",
    "sequence",
    "stop",
  ]);
  assertEquals([...forms].sort(), ["agent", "sequence"]);
  assertOk(unseen > 0, "a choice leaf with tools training never made");
  assertOk(tuned > 0, "a package tuned by cross-validation");
  assertOk(holes > 0, "a leaf that writes a part of a template");
});

Deno.test("docs/schema: the golden order-desk package's IR, manifest, signatures, provenance, candidates and verification validate", () => {
  const ajv = validator();
  const golden = readJson("tests/golden/order_desk.package.json");
  const defs = `${PACKAGE_SCHEMA}#/$defs`;
  assertEquals(errorsOf(ajv, IR_SCHEMA, golden.ir), []);
  assertEquals(errorsOf(ajv, `${defs}/manifest`, golden.manifest), []);
  assertEquals(errorsOf(ajv, `${defs}/verification`, golden.verification), []);
  const signatures = Object.values(golden.signatures as object);
  const provenance = golden.provenance as unknown[];
  const candidates = golden.candidates as unknown[];
  assertOk(signatures.length > 0 && provenance.length > 0);
  assertOk(candidates.length > 0);
  for (const s of signatures) {
    assertEquals(errorsOf(ajv, `${IR_SCHEMA}#/$defs/signature`, s), []);
  }
  for (const p of provenance) {
    assertEquals(errorsOf(ajv, `${defs}/provenance`, p), []);
  }
  for (const c of candidates) {
    assertEquals(errorsOf(ajv, `${defs}/candidate`, c), []);
  }
});

/** A package as plain JSON, to break on purpose. */
interface LoosePackage {
  ir: {
    schema_version: string;
    nodes: Record<string, Record<string, unknown>>;
  };
  manifest: Record<string, unknown>;
  digest: string;
}

Deno.test("docs/schema: packages broken on purpose are rejected at the broken place; a hand-written react node is accepted", async () => {
  const ajv = validator();
  const desk = (await compiledPackages()).get("order desk")!;
  assertEquals(errorsOf(ajv, PACKAGE_SCHEMA, desk), []);
  const root = desk.ir.root;
  const action =
    Object.values(desk.ir.nodes).find((n) => n.kind === "action")!.id;
  const broken: [string, (p: LoosePackage) => void, string][] = [
    ["a node of an unknown kind", (p) => {
      p.ir.nodes[root].kind = "loop";
    }, `/ir/nodes/${root}/kind`],
    ["an action with an unknown effect", (p) => {
      p.ir.nodes[action].effect = "maybe";
    }, `/ir/nodes/${action}/effect`],
    ["a sequence without children", (p) => {
      delete p.ir.nodes[root].children;
    }, `/ir/nodes/${root}`],
    ["a field the code does not write", (p) => {
      p.ir.nodes[root].note = "x";
    }, `/ir/nodes/${root}`],
    ["another IR version", (p) => {
      p.ir.schema_version = "harness.ir.v2";
    }, "/ir/schema_version"],
    ["a manifest without required_capabilities", (p) => {
      delete p.manifest.required_capabilities;
    }, "/manifest"],
    ["a digest that is not sha256", (p) => {
      p.digest = "md5:00";
    }, "/digest"],
    ["a source of an unknown kind", (p) => {
      p.ir.nodes.lk = {
        id: "lk",
        kind: "lookup",
        tool: "find_user",
        args: [{ path: "email", sources: [{ from: "guess" }] }],
      };
    }, "/ir/nodes/lk/args/0/sources/0/from"],
  ];
  for (const [what, breakIt, where] of broken) {
    const p = structuredClone(desk) as unknown as LoosePackage;
    breakIt(p);
    const errors = errorsOf(ajv, PACKAGE_SCHEMA, p);
    assertOk(errors.length > 0, `${what} was accepted`);
    assertOk(
      errors.some((e) => e.startsWith(where)),
      `${what}: no error at ${where}: ${errors.join("; ")}`,
    );
  }
  const react = structuredClone(desk) as unknown as LoosePackage;
  react.ir.nodes.r0 = {
    id: "r0",
    kind: "react",
    signature: "sig_r0",
    tools: ["find_user"],
    max_steps: 3,
    store: "answer",
  };
  assertEquals(errorsOf(ajv, PACKAGE_SCHEMA, react), []);
});

Deno.test("docs/compiler.md links both schema files, which carry their own names as $id", () => {
  const doc = Deno.readTextFileSync(new URL("docs/compiler.md", ROOT));
  for (const name of [IR_SCHEMA, PACKAGE_SCHEMA]) {
    assertOk(doc.includes(`(schema/${name})`), `docs/compiler.md: ${name}`);
    assertEquals(readJson(`docs/schema/${name}`).$id, name);
  }
});
