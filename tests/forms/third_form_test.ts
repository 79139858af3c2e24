/**
 * "A third form is a folder and a row": the `echo` form of
 * `_third_form/echo_form.ts` (a folder no file of `lib/` knows) is added
 * as a row of a table of its own, and through that table alone it is
 * compiled, packaged, validated, verified, explained, replayed and run
 * (`runPackage`);
 * the default table does not know it.
 */
import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { type NormEpisode, NormStep } from "../../lib/lineage/records.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import {
  FORM_TABLE,
  type FormName,
  formOf,
  FormTable,
  NODE_KINDS,
} from "../../lib/forms/form_table.ts";
import {
  isEmptyIr,
  validatePackage,
} from "../../lib/forms/validate_package.ts";
import { verifyPackage } from "../../lib/forms/verify_package.ts";
import { explainPackage } from "../../lib/forms/explain_package.ts";
import { runPackage } from "../../lib/forms/run_package.ts";
import { PackageError } from "../../lib/package/package_error.ts";
import { packageDigest } from "../../lib/package/package_signature.ts";
import { ECHO_FORM, type EchoRun } from "./_third_form/echo_form.ts";

function step(index: number, tool: string, args: Record<string, unknown>) {
  return new NormStep({
    index,
    logical_tool: tool,
    host_tool: tool,
    arguments: args,
    arg_lineage: {},
    result: { ok: true },
    ok: true,
    error: null,
    store: `${tool}_${index}`,
    node_id: null,
    state_before: { input: { text: "page the ops team" } },
  });
}

const EPISODES: NormEpisode[] = [1, 2, 3].map((k) => ({
  episode_id: `ep_${k}`,
  steps: [step(0, "notify", { to: "ops" }), step(1, "log", { n: k })],
  decisions: [],
  success: true,
  outcome: null,
  source_digest: `sha256:${String(k).repeat(64)}`,
}));

const TABLE = new FormTable([...FORM_TABLE.forms, ECHO_FORM]);

function compileEcho() {
  return compileBehavior(EPISODES, {
    name: "pager",
    effects: { notify: "write", log: "write" },
    form: "echo" as FormName,
    table: TABLE,
  }).package;
}

Deno.test("a third form is a folder and a row: a table with the echo form as a row compiles, validates, verifies, explains and runs its package", async () => {
  assertEquals(TABLE.names, ["tree", "agent", "echo"]);
  assertOk(TABLE.kinds.has("echo") && TABLE.kinds.has("action"));
  const pkg = compileEcho();
  assertEquals(pkg.ir.nodes[pkg.ir.root].kind, "echo");
  assertEquals(pkg.manifest.required_capabilities, ["notify"]);
  assertEquals(TABLE.formOf(pkg.ir), ECHO_FORM);
  assertEquals(TABLE.formNamed("echo"), ECHO_FORM);
  assertOk(!isEmptyIr(pkg.ir, TABLE));
  assertEquals(validatePackage(pkg, TABLE).digest, pkg.digest);
  const v = await verifyPackage(pkg, { table: TABLE });
  assertOk(v.ok, JSON.stringify(v.checks));
  const text = explainPackage(pkg, TABLE);
  assertOk(
    text.includes("  it calls notify once, always with the same arguments"),
    text,
  );
  assertOk(text.includes('echo [echo] echo notify({"to":"ops"})'), text);
  const measure = ECHO_FORM.replay(pkg, {
    episode: EPISODES[0],
    effects: pkg.manifest.effects,
  });
  assertEquals([measure.deterministic, measure.needs_model], [1, [
    false,
    true,
  ]]);
  const calls: unknown[] = [];
  const ran = await runPackage(
    pkg,
    { tools: { notify: (to: string) => (calls.push(to), "sent") } },
    {},
    TABLE,
  );
  const run = ran.result as unknown as EchoRun;
  assertEquals([ran.form as string, calls, run.result], [
    "echo",
    ["ops"],
    "sent",
  ]);
  assertEquals(ECHO_FORM.describe(run, pkg), ["echo run of pager: notify"]);
});

Deno.test("the default table does not know the third form, and a malformed echo node is refused by the echo kind's own check", () => {
  const pkg = compileEcho();
  assertEquals(FORM_TABLE.names, ["tree", "agent"]);
  assertOk(!NODE_KINDS.has("echo"));
  assertEquals(FORM_TABLE.find(pkg.ir), undefined);
  const none = assertThrows(() => formOf(pkg.ir), PackageError);
  assertOk(none.message.startsWith("No form runs this package"), none.message);
  assertThrows(() => validatePackage(pkg), /node echo has unknown kind "echo"/);
  const doc = structuredClone(pkg) as unknown as Record<string, unknown>;
  const ir = doc.ir as { nodes: Record<string, Record<string, unknown>> };
  delete ir.nodes.echo.args;
  delete doc.digest;
  doc.digest = packageDigest(doc);
  assertThrows(
    () => validatePackage(doc, TABLE),
    /echo echo needs a tool and its args/,
  );
  assertThrows(
    () => new FormTable([...FORM_TABLE.forms, ECHO_FORM, ECHO_FORM]),
    /Two forms are named "echo"/,
  );
});
