import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { deskModel } from "../../examples/order_desk/capabilities.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import type { Signature } from "../../lib/package/ir.ts";
import { tempDir } from "../_helpers.ts";
import { chatJsonServer, userInputs } from "../_chat_json_server.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { splitByTask } from "../../eval/split_eval.ts";
import { changesState } from "../../lib/package/tool_effects.ts";
import {
  scriptFromTau2,
  type Tau2Simulation,
} from "../../eval/scripted_model.ts";
import { startScriptedModelServer } from "../../eval/scripted_model_server.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** `deno task run …` from the checkout: the task's own narrow permissions. */
async function runTask(
  args: string[],
  env: Record<string, string> = {},
  stdin: string | null = null,
): Promise<{ code: number; out: string; err: string }> {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "run", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    clearEnv: false,
    stdin: stdin === null ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = cmd.spawn();
  if (stdin !== null) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const r = await child.output();
  const dec = new TextDecoder();
  return {
    code: r.code,
    out: dec.decode(r.stdout),
    err: dec.decode(r.stderr),
  };
}

/**
 * A model API on loopback that speaks Chat Completions and answers the
 * desk's predict leaf with structured output (a rule stands in for the
 * model's judgment), keeping every request.
 */
function deskModelServer(signatures: Record<string, Signature>) {
  const requests: Record<string, unknown>[] = [];
  const server = chatJsonServer((body) => {
    requests.push(body);
    const inputs = userInputs(body);
    const sig = Object.values(signatures).find((s) =>
      body.response_format?.json_schema?.name === s.id
    )!;
    return deskModel.predict(sig, inputs);
  }, "chatcmpl-desk");
  return {
    url: server.url,
    requests,
    close: () => server.shutdown(),
  };
}

/**
 * Record order-desk episodes into a store under `dir`, compile them and write
 * the package next to it.
 *
 * @param dir Folder for the store and the package file.
 * @param episodes How many episodes to generate.
 * @returns The package file's path.
 */
async function writeDeskPackage(
  dir: string,
  episodes: number,
): Promise<string> {
  const pkgFile = `${dir}/desk.package.json`;
  using store = new HarnessStore(`${dir}/store`);
  generateDeskEpisodes(store.sink("desk"), "desk", episodes);
  const eps = await loadEpisodes(store, "desk");
  const pkg = compileBehavior(eps, { name: "desk", effects: DESK_EFFECTS })
    .package;
  Deno.writeTextFileSync(pkgFile, JSON.stringify(pkg));
  return pkgFile;
}

Deno.test("compile.ts run: a tree package (the order desk) runs with --model, its residual leaf answered by a model API over HTTP instead of the demo's hand-written binding", async () => {
  await using dir = await tempDir();
  const pkgFile = await writeDeskPackage(dir.path, 120);
  const pkg = JSON.parse(Deno.readTextFileSync(pkgFile));
  const server = deskModelServer(pkg.signatures);
  try {
    let solved = 0;
    let modelCalls = 0;
    for (const episode of [700001, 700002, 700003]) {
      const r = await runTask([
        pkgFile,
        "--capabilities",
        "examples/order_desk/run_capabilities.ts",
        "--episode",
        String(episode),
        "--model",
        "openai/desk-judge",
        "--model-url",
        server.url,
        "--json",
      ]);
      assertEquals(r.code, 0, r.err + r.out);
      const out = JSON.parse(r.out);
      assertEquals(out.form, "tree");
      assertEquals(out.status, "completed");
      assertOk(out.model_calls.length >= 1);
      modelCalls += out.model_calls.length;
      if (out.outcome?.success) solved++;
    }
    assertEquals(solved, 3);
    assertEquals(
      server.requests.length,
      modelCalls,
      "one request per predict leaf the runs reached",
    );
    const first = server.requests[0] as {
      response_format: { type: string; json_schema: { strict: boolean } };
    };
    assertEquals(first.response_format.type, "json_schema");
    assertOk(first.response_format.json_schema.strict);
  } finally {
    await server.close();
  }
});

Deno.test("compile.ts run: a model URL nobody answers is a clear error, nothing is run", async () => {
  await using dir = await tempDir();
  const pkgFile = await writeDeskPackage(dir.path, 60);
  // A port that was just free: nothing listens there.
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const r = await runTask([
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--episode",
    "700001",
    "--model",
    "openai/desk-judge",
    "--model-url",
    `http://127.0.0.1:${port}/v1`,
  ]);
  assertEquals(r.code, 1, r.out);
  assertOk(/cannot reach the model API/i.test(r.err + r.out), r.err + r.out);
});

Deno.test("compile.ts run: an agent-form package without --model, and an Anthropic model without a key, are errors that say what to give", async () => {
  const text = Deno.readTextFileSync(
    new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
  );
  const slice = loadTauData(text);
  const pkg = compileBehavior(
    slice.episodes.filter((e) => e.norm.success).map((e) => e.norm),
    { name: "retail", effects: slice.effects },
  ).package;
  await using dir = await tempDir();
  const pkgFile = `${dir.path}/retail.package.json`;
  Deno.writeTextFileSync(pkgFile, JSON.stringify(pkg));
  const noModel = await runTask([
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
  ]);
  assertEquals(noModel.code, 2);
  assertOk(/--model openai\/MODEL or anthropic\/MODEL/.test(noModel.err));
  const noKey = await runTask([
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--model",
    "anthropic/claude-sonnet-4-5",
  ], { ANTHROPIC_API_KEY: "" });
  assertOk(noKey.code !== 0);
  assertOk(/ANTHROPIC_API_KEY/.test(noKey.err), noKey.err);
});

// Over 80 lines: one scenario end to end, its steps and checks in order.
Deno.test("compile.ts run: a held-out τ² retail task finishes with the compiled agent-form package, the retail environment, a scripted --user-file and --model openai/… against a local server", async () => {
  const read = (p: string) =>
    Deno.readTextFileSync(new URL(`../../fixtures/${p}`, import.meta.url));
  const text = read("tau2_retail_slice.json");
  const matchText = read("tau2_retail_slice_task_match.json");
  const data = loadTauData(text, { matchText });
  const { train, held } = splitByTask(data.episodes, 2);
  const e = held.find((x) => x.id === "tau2_19_0")!;
  assertOk(e, "tau2_19_0 is held out at seed 2");
  const pkg = compileBehavior(
    train.filter((x) => x.norm.success).map((x) => x.norm),
    { name: "retail", effects: data.effects },
  ).package;
  const index = data.episodes.indexOf(e);
  const sim = JSON.parse(text).simulations[index] as Tau2Simulation;
  const task = (JSON.parse(matchText).simulations as {
    index: number;
    matched_task_id: string;
  }[]).find((m) => m.index === index)!.matched_task_id;
  const script = scriptFromTau2(sim);
  const users = script.users.filter((u) => !/###STOP###/.test(u));
  await using dir = await tempDir();
  const pkgFile = `${dir.path}/retail.package.json`;
  Deno.writeTextFileSync(pkgFile, JSON.stringify(pkg));
  const userFile = `${dir.path}/user.jsonl`;
  Deno.writeTextFileSync(
    userFile,
    users.map((u) => JSON.stringify(u)).join("\n") + "\n",
  );
  const writes = new Set(
    Object.keys(data.effects).filter((t) => changesState(data.effects, t)),
  );
  await using server = startScriptedModelServer({ writes });
  const baseUrl = server.addScript(script);
  const r = await runTask([
    pkgFile,
    "--capabilities",
    "examples/tau2/retail_capabilities.ts",
    "--model",
    "openai/recorded-agent",
    "--model-url",
    baseUrl,
    "--user-file",
    userFile,
    "--json",
    "--",
    "--tasks",
    "fixtures/tau2_retail_slice.json",
    "--task",
    task,
  ]);
  assertEquals(r.code, 0, r.err + r.out);
  const out = JSON.parse(r.out);
  assertEquals(out.form, "agent");
  assertEquals(out.status, "completed");
  assertEquals(out.turns, users.length);
  assertEquals(out.outcome.success, true, JSON.stringify(out.outcome));
  assertOk(out.stats.lookups > 0);
  assertEquals(out.stats.refused, 0);
  const turns = script.turns.length;
  assertOk(
    out.stats.model_requests < turns,
    `${out.stats.model_requests} requests, ${turns} recorded turns`,
  );
  assertEquals(server.stats(script.id).requests, out.stats.model_requests);

  // The same conversation with the user's messages on standard input.
  server.resetScript(script.id);
  const piped = await runTask(
    [
      pkgFile,
      "--capabilities",
      "examples/tau2/retail_capabilities.ts",
      "--model",
      "openai/recorded-agent",
      "--model-url",
      baseUrl,
      "--json",
      "--",
      "--tasks",
      "fixtures/tau2_retail_slice.json",
      "--task",
      task,
    ],
    {},
    users.map((u) => u.replace(/\n/g, " ")).join("\n") + "\n",
  );
  assertEquals(piped.code, 0, piped.err + piped.out);
  const viaStdin = JSON.parse(piped.out);
  assertEquals(viaStdin.turns, users.length);
  assertEquals(viaStdin.outcome.success, true);
});

Deno.test("runPackage: a tree package's residual leaf through chatModelBinding records the API's token usage in model.responded", async () => {
  const { runPackage } = await import("../../lib/forms/run_package.ts");
  const { chatModelBinding } = await import(
    "../../lib/forms/tree/chat_binding.ts"
  );
  const { openModel } = await import("../../lib/models/open_model.ts");
  const { createCapabilities } = await import(
    "../../examples/order_desk/capabilities.ts"
  );
  await using dir = await tempDir();
  using store = new HarnessStore(`${dir.path}/store`);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  const pkg = compileBehavior(await loadEpisodes(store, "desk"), {
    name: "desk",
    effects: DESK_EFFECTS,
  }).package;
  const server = deskModelServer(pkg.signatures);
  try {
    const events: { kind: string; payload: Record<string, unknown> }[] = [];
    const caps = createCapabilities({ episode: 700004 });
    const run = await runPackage(pkg, caps, {
      chatBinding: chatModelBinding(
        openModel("openai/desk-judge", { url: server.url, env: {} }),
      ),
      sink: { emit: (e) => void events.push(e) },
    });
    assertEquals(run.form, "tree");
    const responded = events.filter((e) => e.kind === "model.responded");
    assertOk(responded.length >= 1);
    for (const r of responded) {
      assertEquals(r.payload.usage, {
        input_tokens: 50,
        output_tokens: 5,
        total_tokens: 55,
      });
    }
  } finally {
    await server.close();
  }
});
