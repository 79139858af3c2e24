/**
 * The table of forms: the one place a package's form is decided, the
 * forms `--form` names, the order `--form auto` tries them in, and the
 * tree form's trial verification, on the vendored τ² retail slice
 * (`fixtures/tau2_retail_slice.json`, conversations).
 */
import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import {
  AUTO_ORDER,
  formNamed,
  formOf,
  FORMS,
} from "../../lib/forms/form_table.ts";
import { UnservableError } from "../../lib/forms/unservable_error.ts";
import { PackageError } from "../../lib/package/package_error.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { agentIrWith } from "./_agent_ir.ts";
import { compileTraining } from "../compiler/_dataflow.ts";
import { TreeGatewayDriver } from "../../lib/forms/tree/gateway_driver.ts";

const slice = loadTauData(
  Deno.readTextFileSync(
    new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
  ),
);
const trainOk = slice.episodes.filter((e) => e.norm.success === true)
  .map((e) => e.norm);

Deno.test("formOf() reads the form from the IR's root, and formNamed() refuses a name no row has", () => {
  const agentIr = agentIrWith({
    id: "lookup_get_user_details",
    kind: "lookup",
    tool: "get_user_details",
    args: [],
  } as never);
  assertEquals(formOf(agentIr).name, "agent");
  const treeIr = {
    ...agentIr,
    root: "seq",
    nodes: { seq: { id: "seq", kind: "sequence", children: [] } },
  };
  assertEquals(formOf(treeIr as never).name, "tree");
  assertEquals(formNamed("tree"), FORMS.tree);
  assertEquals(AUTO_ORDER.map((f) => f.name), ["tree", "agent"]);
  // A root no row owns (a lookup node alone is the agent form's part, not its root).
  const stray = assertThrows(
    () => formOf({ ...agentIr, root: "lookup_get_user_details" }),
    PackageError,
  );
  assertOk(
    stray.message.startsWith(
      "No form runs this package: its root lookup_get_user_details is a lookup node",
    ),
    stray.message,
  );
  const err = assertThrows(() => formNamed("graph"), TypeError);
  assertOk(
    /Unknown form "graph": expected one of tree, agent/.test(err.message),
  );
});

Deno.test("--form auto tries the tree as a trial: its verification stops at the first unclean episode, the agent form is kept", () => {
  const tree = FORMS.tree.compile(trainOk, {
    effects: slice.effects,
    trial: true,
  });
  const full = FORMS.tree.compile(trainOk, { effects: slice.effects });
  assertEquals(full.verification.episodes_replayed, trainOk.length);
  assertOk(full.verification.episodes_clean < trainOk.length);
  assertEquals(tree.verification.episodes_clean, 0);
  assertOk(tree.verification.episodes_replayed < trainOk.length);
  const auto = compileBehavior(trainOk, {
    name: "tau",
    effects: slice.effects,
    tune: false,
  });
  assertEquals(formOf(auto.package.ir).name, "agent");
});

Deno.test("serve() refuses a package compile marked not servable (a tree that does not replay its own training clean), saying why and what would make it servable", () => {
  const tree = compileBehavior(trainOk, {
    name: "retail_tree",
    effects: slice.effects,
    form: "tree",
  }).package;
  assertEquals(formOf(tree.ir).name, "tree");
  assertOk(
    /^its replay of its own \d+ training sessions is not clean: \d+\/\d+ checks passed/
      .test(tree.manifest.not_servable ?? ""),
    tree.manifest.not_servable,
  );
  const err = assertThrows(() => formOf(tree.ir).serve(tree), UnservableError);
  assertOk(
    err.message.startsWith(
      "retail_tree is marked not servable: its replay of its own",
    ),
    err.message,
  );
  assertOk(/To make it servable, compile it again/.test(err.message));
});

Deno.test("a tree that replays its training clean is served at the model API by its form (TreeGatewayDriver)", async () => {
  const { package: pkg } = await compileTraining();
  assertEquals(pkg.manifest.not_servable, undefined);
  const served = formOf(pkg.ir).serve(pkg);
  assertOk(served instanceof TreeGatewayDriver);
  assertEquals(served.id, `dataflow@${pkg.digest}`);
});
