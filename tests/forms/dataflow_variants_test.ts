/**
 * Issue #36's last done-when: real Claude Code sessions of the lab's
 * `dataflow` scenario, each on its own data (`fixtures/hosts/host_a/
 * dataflow/`, recorded by `tools/record_dataflow.ts`), compiled from the
 * seven training variants through the real host_a adapter into a real
 * store, as `compile.ts` compiles; the package binds values (refs and
 * templates over earlier results), leaves to the model only what nothing
 * recorded determines (covered or insufficient), and runs on the two
 * variants it never saw, in a temp folder with Claude Code's built-in
 * tools (`examples/claude_code/`), writing exactly the report the recorded
 * session wrote.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { runPackage } from "../../lib/forms/run_package.ts";
import { explainPackage } from "../../lib/forms/explain_package.ts";
import type { Signature } from "../../lib/package/ir.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import type { ArgExpr } from "../../lib/forms/tree/tree_nodes.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import type { ModelBinding } from "../../lib/forms/tree/tree_run_types.ts";
import { createCapabilities } from "../../examples/claude_code/workspace_capabilities.ts";
import { tempDir } from "../_helpers.ts";
import { chatJsonServer, userInputs } from "../_chat_json_server.ts";
import {
  compileTraining,
  prompt,
  type Workspace,
  workspace,
} from "../compiler/_dataflow.ts";

type Action = Extract<IrNode, { kind: "action" }>;

function actions(pkg: BehaviorPackage): Action[] {
  const root = pkg.ir.nodes[pkg.ir.root] as Extract<
    IrNode,
    { kind: "sequence" }
  >;
  return root.children.map((id) => pkg.ir.nodes[id])
    .filter((n): n is Action => n.kind === "action");
}

function template(e: ArgExpr | undefined): string {
  assertOk(e && "template" in e, `a template, not ${JSON.stringify(e)}`);
  return e.template;
}

/** A folder holding a variant's files, as the session found them. */
async function unpack(variant: string, dir: string): Promise<Workspace> {
  const ws = workspace(variant);
  for (const [p, text] of Object.entries(ws.files)) {
    await Deno.mkdir(join(dir, p, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, p), text);
  }
  return ws;
}

/**
 * The model the leaves get: it plays the scenario's policy from its
 * inputs, as the scripted model of the recording did (the description of
 * the first command; covered when the ledger's balance is at least the
 * order's amount), and keeps every call.
 */
function policyModel(): ModelBinding & { calls: Signature[] } {
  const calls: Signature[] = [];
  return {
    id: "dataflow-policy",
    calls,
    predict(signature, inputs) {
      calls.push(signature);
      return Object.fromEntries(
        Object.keys(signature.outputs).map((name) => [
          name,
          name === "description"
            ? "Find the next pending order"
            : statusOf(inputs),
        ]),
      );
    },
  };
}

/** covered or insufficient, from the Read's order and the ledger line. */
function statusOf(inputs: Record<string, unknown>): string {
  const text = JSON.stringify(inputs);
  const amount = /\\"amount\\": \\"([\d.]+)\\"/.exec(text)?.[1];
  const balance = /"stdout":"[^",]+,([\d.]+)"/.exec(text)?.[1];
  assertOk(
    amount && balance,
    `the leaf sees the order and the ledger: ${text}`,
  );
  return Number(balance) >= Number(amount) ? "covered" : "insufficient";
}

Deno.test("compileBehavior() on seven recorded Claude Code dataflow sessions binds values, not constants: Read's path from the queue grep, the ledger grep from the Read, the report from both, and the status is a model leaf", async () => {
  const r = await compileTraining();
  const pkg = r.package;
  assertEquals(
    r.verification.episodes_clean,
    7,
    r.verification.problems.join("\n"),
  );
  const [queue, read, ledger, report] = actions(pkg);
  assertEquals(
    actions(pkg).map((a) => a.tool),
    ["Bash", "Read", "Bash", "Write"],
  );
  // Read is a step, its path from the working folder and the queue grep.
  assertEquals(
    template(read.args.file_path),
    `$ref(input.cwd)/orders/$ref(${queue.store}.stdout~word[1]).json`,
  );
  // The ledger grep's command from the order the Read returned.
  assertEquals(
    template(ledger.args.command),
    `grep '^$ref(${read.store}.file.content~json.customer),' ledger.csv`,
  );
  // The report's path and content from earlier results; the status is the
  // one part nothing recorded determines: a variable a model leaf writes.
  assertEquals(
    template(report.args.file_path),
    `$ref(input.cwd)/reports/$ref(${read.store}.file.content~json.order_id).txt`,
  );
  const content = template(report.args.content);
  const order = `${read.store}.file.content~json`;
  const hole = /status: \$ref\((val_[^)]+)\)\n$/.exec(content)?.[1];
  assertOk(hole, content);
  assertEquals(
    content,
    `order $ref(${order}.order_id)\ncustomer $ref(${order}.customer)\namount $ref(${order}.amount) $ref(${order}.currency)\nbalance $ref(${ledger.store}.stdout~word[1])\nstatus: $ref(${hole})\n`,
  );
  const leaf = (Object.values(pkg.ir.nodes) as IrNode[]).find((n) =>
    n.kind === "predict" && Object.values(n.outputs).includes(hole)
  );
  assertOk(leaf?.kind === "predict", "a model leaf writes the status");
  assertEquals(leaf.decides.node, report.id);
  // No constant anywhere, and no training datum in the package's steps.
  const ir = JSON.stringify(pkg.ir);
  assertOk(!ir.includes('"const"'), ir);
  assertOk(!/covered|insufficient|ORD-\d|C-\d{4}|EUR|\d+\.\d\d/.test(ir), ir);
  // In a Claude Code user's words: the status is the model's, the rest bound.
  const words = explainPackage(pkg);
  assertOk(
    /the model writes a part of content \(the text between "\\nstatus: " and "\\n"; the recorded sessions wrote "covered" or "insufficient" there\)/
      .test(words),
    words,
  );
  assertOk(/2\. Read: runs without the model/.test(words), words);
  assertOk(/3\. Bash: runs without the model/.test(words), words);
});

Deno.test("runPackage(): the dataflow package runs on the two variants it never saw, in a folder of their files: the report is the recorded session's, byte for byte, covered and insufficient alike; lookups without the model, the model only at its leaves", async () => {
  const pkg = (await compileTraining()).package;
  const leaves = Object.values(pkg.ir.nodes)
    .filter((n) => n.kind === "predict").map((n) => n.signature).sort();
  for (const variant of ["v8", "v9"]) {
    await using dir = await tempDir();
    const folder = await Deno.realPath(dir.path);
    const ws = await unpack(variant, folder);
    const caps = createCapabilities({ args: [folder] });
    const model = policyModel();
    const run = await runPackage(pkg, {
      ...caps,
      input: { ...caps.input, text: prompt(variant) },
      model,
    });
    assertEquals(run.form, "tree");
    const result = run.result as
      & Awaited<
        ReturnType<typeof runPackage>
      >["result"]
      & {
        status: string;
        steps: { tool?: string; arguments?: Record<string, unknown> }[];
      };
    assertEquals(result.status, "completed", JSON.stringify(result));
    assertEquals(
      await Deno.readTextFile(join(folder, ws.report.path)),
      ws.report.content,
      variant,
    );
    const calls = result.steps.filter((s) => s.tool);
    assertEquals(calls.map((s) => s.tool), ["Bash", "Read", "Bash", "Write"]);
    const order = ws.report.path.slice("reports/".length, -".txt".length);
    assertEquals(calls[1].arguments, {
      file_path: `${folder}/orders/${order}.json`,
    });
    assertEquals(
      model.calls.map((s) => s.id).sort(),
      leaves,
      "the model is asked once per leaf, for nothing else",
    );
  }
  // The two unseen variants differ where the status does.
  assertOk(/covered/.test(workspace("v8").report.content));
  assertOk(/insufficient/.test(workspace("v9").report.content));
});

/**
 * A Chat Completions API on loopback playing the scenario's policy at the
 * package's leaves (structured output, as the chat binding asks).
 */
function policyServer() {
  const requests: { name: string; fields: string[] }[] = [];
  const server = chatJsonServer((body) => {
    const schema = body.response_format.json_schema;
    const fields = Object.keys(schema.schema.properties);
    requests.push({ name: schema.name, fields });
    const inputs = userInputs(body);
    return Object.fromEntries(fields.map((f) => [
      f,
      f === "description" ? "Find the next pending order" : statusOf(inputs),
    ]));
  }, "chatcmpl-policy");
  return {
    url: server.url,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("compile.ts run: the dataflow package runs on an unseen variant with the Claude Code capabilities module, the deno run line docs/runtime.md gives, and a model API for its leaves", async () => {
  const pkg = (await compileTraining()).package;
  await using dir = await tempDir();
  const folder = await Deno.realPath(dir.path);
  const work = join(folder, "work");
  await Deno.mkdir(work);
  const ws = await unpack("v9", work);
  const pkgFile = join(folder, "dataflow.package.json");
  await Deno.writeTextFile(pkgFile, JSON.stringify(pkg));
  await using model = policyServer();
  const root = new URL("../../", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      `--allow-write=${work}`,
      "--allow-run=bash",
      "--allow-net=127.0.0.1",
      "--allow-env=OPENAI_API_KEY,OPENAI_BASE_URL",
      "compile.ts",
      "run",
      pkgFile,
      "--capabilities",
      "examples/claude_code/workspace_capabilities.ts",
      "--model",
      "openai/dataflow-policy",
      "--model-url",
      model.url,
      "--input",
      prompt("v9"),
      "--json",
      "--",
      work,
    ],
    cwd: root,
    env: { NO_COLOR: "1", OPENAI_API_KEY: "sk-test" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr) + text);
  const run = JSON.parse(text);
  assertEquals([run.form, run.status], ["tree", "completed"], text);
  assertEquals(
    await Deno.readTextFile(join(work, ws.report.path)),
    ws.report.content,
  );
  assertOk(/insufficient/.test(ws.report.content));
  assertEquals(
    model.requests.map((r) => r.fields.join(",")).sort(),
    ["content_1", "description"],
    "the model API is asked for the leaves only",
  );
  // Nothing refused or failed on the way (a tree run refuses by stopping).
  const steps = run.steps as { tool?: string; error?: unknown }[];
  assertEquals(steps.filter((s) => s.error !== undefined), []);
  assertEquals(
    steps.filter((s) => s.tool).map((s) => s.tool),
    ["Bash", "Read", "Bash", "Write"],
  );
});
