import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { main } from "../../ingest.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { normalizeEpisode } from "../../lib/lineage/normalize.ts";
import { tempDir } from "../_helpers.ts";

const FIXTURES = new URL("../../fixtures", import.meta.url).pathname;

async function run(args: string[]) {
  let out = "", err = "";
  const code = await main(args, {
    out: (t) => out += t + "\n",
    err: (t) => err += t + "\n",
  });
  return { code, out, err };
}

/** A slice of the real τ²-bench retail file. */
function retailSlice(n: number): string {
  const d = JSON.parse(
    Deno.readTextFileSync(
      new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
    ),
  );
  return JSON.stringify({ ...d, simulations: d.simulations.slice(0, n) });
}

Deno.test("import tau2: one episode per trajectory with real calls, parsed results, rewards and provenance", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "slice.json");
  Deno.writeTextFileSync(file, retailSlice(5));
  const r = await run([
    "import",
    file,
    "--format",
    "tau2",
    "--capture",
    "ret",
    "--root",
    join(dir.path, "s"),
    "--json",
  ]);
  assertEquals(r.code, 0, r.err);
  assertEquals(JSON.parse(r.out).episodes, 5);
  using store = new HarnessStore(join(dir.path, "s"));
  assertEquals((await store.verifyCapture("ret")).ok, true);
  const eps = await loadEpisodes(store, "ret");
  assertEquals(eps.length, 5);
  const first = eps[0];
  const started = first.events[0];
  assertEquals((started.payload.provenance as { index: number }).index, 0);
  assertOk(
    String((started.payload.provenance as { file_sha256: string }).file_sha256)
      .startsWith("sha256:"),
  );
  const call = first.events.find((e) => e.kind === "tool.call.started")!;
  const done = first.events.find((e) => e.parent_event_id === call.event_id)!;
  assertEquals(done.kind, "tool.call.completed");
  const outcome = first.events.find((e) => e.kind === "annotation")!;
  assertEquals(outcome.payload.success, true);
  // Results that are JSON text are parsed, so lineage sees their fields.
  const norm = normalizeEpisode(first);
  assertOk(
    norm.steps.some((s) =>
      Object.values(s.arg_lineage).some((l) => l && l.includes("."))
    ),
  );
  assertEquals(norm.success, true);
});

Deno.test("import detects a file imported twice, and tau-bench v1 and plain message lists import too", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "s");
  const file = join(dir.path, "slice.json");
  Deno.writeTextFileSync(file, retailSlice(2));
  assertEquals(
    (await run([
      "import",
      file,
      "--format",
      "tau2",
      "--capture",
      "c",
      "--root",
      root,
    ])).code,
    0,
  );
  const again = await run([
    "import",
    file,
    "--format",
    "tau2",
    "--capture",
    "c",
    "--root",
    root,
  ]);
  assertEquals(again.code, 1);
  assertOk(/already imported/.test(again.err), again.err);
  const v1 = JSON.parse(
    Deno.readTextFileSync(`${FIXTURES}/tau_bench_v1_airline_slice.json`),
  ).slice(0, 3);
  const v1file = join(dir.path, "v1.json");
  Deno.writeTextFileSync(v1file, JSON.stringify(v1));
  const r1 = await run([
    "import",
    v1file,
    "--format",
    "tau-bench",
    "--capture",
    "v1",
    "--root",
    root,
    "--json",
  ]);
  assertEquals([r1.code, JSON.parse(r1.out).episodes], [0, 3], r1.err);
  const plain = join(dir.path, "plain.json");
  Deno.writeTextFileSync(
    plain,
    JSON.stringify([{
      id: "t1",
      reward: 1,
      messages: [
        { role: "user", content: "find U-1001" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "c1",
            type: "function",
            function: { name: "get_user", arguments: '{"id":"U-1001"}' },
          }],
        },
        {
          role: "tool",
          tool_call_id: "c1",
          content: '{"id":"U-1001","name":"Ana"}',
        },
        { role: "assistant", content: "Found Ana." },
      ],
    }]),
  );
  const r2 = await run([
    "import",
    plain,
    "--format",
    "openai-messages",
    "--capture",
    "p",
    "--root",
    root,
    "--json",
  ]);
  assertEquals([r2.code, JSON.parse(r2.out).events], [0, 7], r2.err);
});

Deno.test("bad input is a clear error naming the position, and nothing is imported", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "s");
  const cases: [string, RegExp][] = [
    ["{not json", /file: not JSON/],
    [JSON.stringify({ simulations: "x" }), /simulations list/],
    [
      JSON.stringify({
        simulations: [{
          task_id: 7,
          messages: [{ role: "tool", id: "zz", content: "x" }],
        }],
      }),
      /trajectory 0 \(task 7\), message 0: a tool result without its call \(id zz\)/,
    ],
    [
      JSON.stringify({ simulations: [{ messages: [{ content: "no role" }] }] }),
      /message 0: a message needs a role/,
    ],
    [
      JSON.stringify({
        simulations: [{
          task_id: 3,
          messages: [
            { role: "user", content: "hi" },
            {
              role: "assistant",
              tool_calls: [{
                id: "c1",
                name: "get_order_details",
                arguments: {},
              }],
            },
            { role: "assistant", content: "done" },
          ],
        }],
      }),
      /trajectory 0 \(task 3\), message 1: the call of get_order_details \(id c1\) has no tool result/,
    ],
    [
      JSON.stringify({
        simulations: [{
          task_id: 4,
          messages: [{
            role: "assistant",
            tool_calls: [{
              id: "c1",
              name: "get_order_details",
              arguments: "{oops",
            }],
          }],
        }],
      }),
      /trajectory 0 \(task 4\), message 0, tool call 0: arguments are not JSON/,
    ],
    [
      JSON.stringify({
        simulations: [{
          task_id: 5,
          messages: [{
            role: "assistant",
            tool_calls: [{ id: "c1", name: "drop_tables", arguments: {} }],
          }],
        }],
      }),
      /trajectory 0 \(task 5\), message 0, tool call 0: unknown tool "drop_tables"/,
    ],
  ];
  for (const [text, pattern] of cases) {
    const file = join(dir.path, "bad.json");
    Deno.writeTextFileSync(file, text);
    const r = await run([
      "import",
      file,
      "--format",
      "tau2",
      "--capture",
      "bad",
      "--tools",
      "get_order_details,get_user_details",
      "--root",
      root,
    ]);
    assertEquals(r.code, 1);
    assertOk(pattern.test(r.err), r.err);
  }
  using store = new HarnessStore(root);
  assertEquals(store.hasCapture("bad"), false);
});
