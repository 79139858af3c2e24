/**
 * `compile.ts run` when something fails on the way (issue #37 items 7 and
 * 8): a model API that answers 500, a model that does not answer in time,
 * a capabilities module whose tool cannot be bound. The run is printed
 * (`--json` too) with `status: "failed"` and its error, exits 1, and its
 * traced episode is finished with the error recorded. Real parts only: the
 * task's own permissions, a scripted model server on 127.0.0.1, the order
 * desk's package compiled in the agent form.
 */
import { CHECKOUT, task } from "./_tasks.ts";
import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { createCapabilities } from "../../examples/order_desk/capabilities.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { runPackage } from "../../lib/forms/run_package.ts";
import { openModel } from "../../lib/models/open_model.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import type { UnsealedEvent } from "../../lib/trace/event.ts";
import { tempDir } from "../_helpers.ts";
import { startScriptedServer } from "../models/_scripted_server.ts";

/** `deno task run …` from the checkout, with the task's permissions. */
function runTask(
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  return task(CHECKOUT, ["run", ...args]);
}

/** The order desk compiled in the agent form (a conversation). */
async function deskAgentPackage(dir: string): Promise<BehaviorPackage> {
  using store = new HarnessStore(`${dir}/store`);
  generateDeskEpisodes(store.sink("desk"), "desk", 30);
  return compileBehavior(await loadEpisodes(store, "desk"), {
    name: "desk",
    effects: DESK_EFFECTS,
    form: "agent",
    tune: false,
  }).package;
}

/** A package file and a user file of one desk request. */
async function deskFiles(dir: string) {
  const pkg = await deskAgentPackage(dir);
  const pkgFile = `${dir}/desk.package.json`;
  Deno.writeTextFileSync(pkgFile, JSON.stringify(pkg));
  const userFile = `${dir}/user.jsonl`;
  const text = createCapabilities({ episode: 700001 }).input.text;
  Deno.writeTextFileSync(userFile, JSON.stringify(text) + "\n");
  return { pkg, pkgFile, userFile };
}

const TOKEN_CAP = {
  status: 500,
  json: {
    error: {
      message:
        "The generation reached max_tokens (64) inside a tool call: the call is incomplete",
      type: "server_error",
    },
  },
};

Deno.test("compile.ts run --json: a 500 from the model (a tool call cut off by the token cap) prints the failed run with its real cause, sends the generation once, and passes --max-tokens", async () => {
  await using dir = await tempDir();
  const { pkgFile, userFile } = await deskFiles(dir.path);
  await using server = startScriptedServer([TOKEN_CAP]);
  const r = await runTask([
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--episode",
    "700001",
    "--model",
    "openai/capped",
    "--model-url",
    `${server.origin}/v1`,
    "--max-tokens",
    "64",
    "--user-file",
    userFile,
    "--json",
  ]);
  assertEquals(r.code, 1, r.err + r.out);
  const out = JSON.parse(r.out);
  assertEquals(out.form, "agent");
  assertEquals(out.status, "failed");
  assertEquals(out.error.name, "ModelApiError");
  assertEquals(out.error.status, 500);
  assertEquals(out.error.attempts, 1);
  assertOk(/max_tokens \(64\)/.test(out.reason), out.reason);
  assertOk(/token cap/.test(out.reason), out.reason);
  assertOk(!/try again later/.test(out.reason), out.reason);
  assertEquals(server.requests.length, 1, "a retry cannot help: sent once");
  assertEquals(server.requests[0].body?.max_tokens, 64);
});

Deno.test("compile.ts run: a failed model request is printed on the terminal as a failed run, and the error says harness run:", async () => {
  await using dir = await tempDir();
  const { pkgFile, userFile } = await deskFiles(dir.path);
  await using server = startScriptedServer([TOKEN_CAP]);
  const r = await runTask([
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--model",
    "openai/capped",
    "--model-url",
    `${server.origin}/v1`,
    "--user-file",
    userFile,
  ]);
  assertEquals(r.code, 1, r.err + r.out);
  assertOk(/conversation with desk: failed/.test(r.out), r.out);
  assertOk(/^harness run: The model API/m.test(r.err), r.err);
  const bad = await runTask([
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--model-timeout",
    "soon",
  ]);
  assertEquals(bad.code, 2);
  assertOk(/^harness run: --model-timeout "soon"/.test(bad.err), bad.err);
});

Deno.test("compile.ts run --model-timeout: a model that never answers fails the run within the time given, not 60 s × 4", async () => {
  await using dir = await tempDir();
  const { pkgFile, userFile } = await deskFiles(dir.path);
  await using server = startScriptedServer(
    Array.from({ length: 4 }, () => ({ hang: true })),
  );
  const t0 = performance.now();
  const r = await runTask([
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--model",
    "openai/slow",
    "--model-url",
    `${server.origin}/v1`,
    "--model-timeout",
    "0.3",
    "--user-file",
    userFile,
    "--json",
  ]);
  const seconds = (performance.now() - t0) / 1000;
  assertEquals(r.code, 1, r.err + r.out);
  const out = JSON.parse(r.out);
  assertEquals(out.status, "failed");
  assertOk(/did not answer in time/.test(out.reason), out.reason);
  // Not a speed bound: whether the flag is taken at all. Four 0.3 s
  // attempts and their back-offs take about 5 s with the process's start;
  // the default would wait 60 s × 4. The line is half of that, 24 times
  // what the run takes idle.
  assertOk(seconds < 120, `${seconds} s: --model-timeout was not taken`);
});

Deno.test("runPackage: a model error finishes the traced conversation with run.failed and episode.finished", async () => {
  await using dir = await tempDir();
  const pkg = await deskAgentPackage(dir.path);
  await using server = startScriptedServer([TOKEN_CAP]);
  const events: UnsealedEvent[] = [];
  const caps = createCapabilities({ episode: 700001 });
  const run = await runPackage(pkg, caps, {
    chat: openModel("openai/capped", { url: `${server.origin}/v1`, env: {} }),
    users: [caps.input.text],
    sink: { emit: (e) => void events.push(e) },
    captureId: "run_desk",
    episodeId: "run_1",
  });
  assertEquals(run.form, "agent");
  assertEquals(run.result.status, "failed");
  const kinds = events.map((e) => e.kind);
  assertEquals(kinds[0], "episode.started");
  assertEquals(kinds.at(-1), "episode.finished");
  const failed = events.find((e) =>
    e.kind === "annotation" && e.payload.type === "run.failed"
  );
  assertOk(failed, kinds.join(", "));
  assertEquals((failed.payload.error as { status: number }).status, 500);
  const finished = events.at(-1)!;
  assertEquals(finished.payload.reason, "failed");
  assertOk(/max_tokens/.test(String(finished.payload.stop_reason)));
});

Deno.test("compile.ts run: a capabilities module whose tool is (a) => … stops the run with the binding error (exit 1, --json says failed), never a silent failed lookup", async () => {
  await using dir = await tempDir();
  const { pkgFile, userFile } = await deskFiles(dir.path);
  await using server = startScriptedServer([]);
  const r = await runTask([
    pkgFile,
    "--capabilities",
    "tests/cli/_unbindable_capabilities.ts",
    "--episode",
    "700001",
    "--model",
    "openai/unused",
    "--model-url",
    `${server.origin}/v1`,
    "--user-file",
    userFile,
    "--json",
  ]);
  assertEquals(r.code, 1, r.err + r.out);
  const out = JSON.parse(r.out);
  assertEquals(out.status, "failed");
  assertEquals(out.error.name, "ToolBindingError");
  assertOk(
    /Cannot bind the arguments of find_user/.test(out.reason),
    out.reason,
  );
  assertOk(/declareTool/.test(out.reason));
  assertEquals(server.requests.length, 0, "nothing was asked of the model");
});

Deno.test("runPackage: a tree package whose model answers 500 ends failed at the leaf with the steps before it, the error traced, and the index leaf's schema bounded by its list", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(`${dir.path}/store`);
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  const pkg = compileBehavior(await loadEpisodes(store, "desk"), {
    name: "desk",
    effects: DESK_EFFECTS,
  }).package;
  await using server = startScriptedServer([TOKEN_CAP]);
  const events: UnsealedEvent[] = [];
  const run = await runPackage(pkg, createCapabilities({ episode: 700001 }), {
    chat: openModel("openai/capped", { url: `${server.origin}/v1`, env: {} }),
    sink: { emit: (e) => void events.push(e) },
  });
  assertEquals(run.form, "tree");
  if (run.form !== "tree") return;
  assertEquals(run.result.status, "failed");
  assertEquals(run.result.error?.name, "ModelApiError");
  assertOk(run.result.steps.length > 0, "the calls before the leaf are kept");
  const leaf = run.result.error?.at;
  assertOk(leaf && pkg.ir.nodes[leaf]?.kind === "predict", String(leaf));
  assertEquals(server.requests.length, 1);
  const kinds = events.map((e) => e.kind);
  assertEquals(kinds.at(-1), "episode.finished");
  assertEquals(events.at(-1)!.payload.reason, "failed");
  assertOk(
    events.some((e) =>
      e.kind === "annotation" && e.payload.type === "run.failed"
    ),
    kinds.join(", "),
  );
  const body = server.requests[0].body as {
    messages: { role: string; content: string }[];
    response_format: {
      json_schema: { schema: { properties: Record<string, unknown> } };
    };
  };
  const inputs = JSON.parse(
    body.messages[1].content.replace(/^Inputs \(JSON\):\n/, ""),
  );
  const props = body.response_format.json_schema.schema.properties;
  if (Array.isArray(inputs.options) && "index" in props) {
    assertEquals(props.index, {
      type: "integer",
      minimum: 0,
      maximum: inputs.options.length - 1,
      description: (props.index as { description: string }).description,
    });
  } else {
    throw new Error(
      `the desk's first leaf is not an index leaf: ${JSON.stringify(props)}`,
    );
  }
});

/** A Chat Completions answer: a text reply, or one tool call. */
function chatAnswer(
  reply: { text: string } | { tool: string; args: Record<string, unknown> },
) {
  const message = "text" in reply
    ? { role: "assistant", content: reply.text }
    : {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_1",
        type: "function",
        function: { name: reply.tool, arguments: JSON.stringify(reply.args) },
      }],
    };
  return {
    json: {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 0,
      model: "scripted",
      choices: [{
        index: 0,
        message,
        finish_reason: "text" in reply ? "stop" : "tool_calls",
      }],
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    },
  };
}

Deno.test("compile.ts run: a conversation whose write was refused says so in its status, on the terminal and in --json, though the model's reply claims it was done", async () => {
  await using dir = await tempDir();
  const { pkgFile, userFile } = await deskFiles(dir.path);
  const script = () => [
    chatAnswer({ tool: "refund", args: { order_id: "W0000000", amount: 5 } }),
    chatAnswer({ text: "Done: the order is refunded." }),
  ];
  const args = (server: { origin: string }) => [
    pkgFile,
    "--capabilities",
    "examples/order_desk/run_capabilities.ts",
    "--episode",
    "700001",
    "--model",
    "openai/claims",
    "--model-url",
    `${server.origin}/v1`,
    "--user-file",
    userFile,
  ];
  await using server = startScriptedServer(script());
  const r = await runTask([...args(server), "--json"]);
  const out = JSON.parse(r.out);
  assertEquals(out.status, "completed", r.err);
  assertEquals(out.refused, 1);
  assertEquals(out.replies, ["Done: the order is refunded."]);
  await using again = startScriptedServer(script());
  const text = await runTask(args(again));
  assertOk(
    /conversation with desk: completed with 1 refused call \(not made/.test(
      text.out,
    ),
    text.out,
  );
});
