import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import {
  argLineage,
  directoryOccurrences,
  workingDirectory,
} from "../../lib/lineage/arg_lineage.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { normalizeAll } from "../../lib/lineage/normalize.ts";
import { StateIndex } from "../../lib/lineage/state_index.ts";

const CWD = "/home/dev/agent-demo/work/basic";

function indexOf(stores: [string, unknown][]): StateIndex {
  const index = new StateIndex();
  for (const [k, v] of stores) index.add(k, v);
  return index;
}

Deno.test("argLineage() ranks the working directory before a tool result holding the same path", () => {
  // `pwd` printed the directory: a shorter path than input.cwd, still not its source.
  const index = indexOf([["input", { cwd: CWD }], ["bash_0", CWD]]);
  assertEquals(argLineage(CWD, index), "input.cwd");
  // A read echoes the path it read: a later edit of that file is the directory's.
  const echoed = indexOf([
    ["input", { cwd: CWD }],
    ["read_0", { path: `${CWD}/notes.txt`, text: "agent-demo basic" }],
  ]);
  assertEquals(
    argLineage(`${CWD}/notes.txt`, echoed),
    "$ref(input.cwd)/notes.txt",
  );
});

Deno.test("argLineage() attributes the working directory inside a command and the rest as usual", () => {
  const index = indexOf([
    ["input", { cwd: CWD }],
    ["read_0", "<path>/home/dev/agent-demo/work/basic/a.txt</path> ORD-7731"],
  ]);
  const order = argLineage("ORD-7731", index)!;
  assertOk(order.startsWith("read_0"), order);
  assertEquals(
    argLineage(`cd ${CWD} && grep ORD-7731 ${CWD}/log.txt`, index),
    `cd $ref(input.cwd) && grep $ref(${order}) $ref(input.cwd)/log.txt`,
  );
});

Deno.test("argLineage() keeps what the user wrote before the working directory", () => {
  const index = new StateIndex();
  index.add("input", { cwd: CWD, text: `Please read ${CWD}/notes.txt now` });
  assertEquals(argLineage(`${CWD}/notes.txt`, index), "input.text~word[2]");
});

Deno.test("directoryOccurrences() finds the directory only as a whole path", () => {
  assertEquals(directoryOccurrences(`${CWD}/x`, CWD), [0]);
  assertEquals(directoryOccurrences(`ls "${CWD}"`, CWD), [4]);
  assertEquals(directoryOccurrences(`${CWD}2/x`, CWD), []);
  assertEquals(directoryOccurrences(`/mnt${CWD}/x`, CWD), []);
  assertEquals(directoryOccurrences(`a ${CWD} b ${CWD}/c`, CWD), [
    2,
    CWD.length + 5,
  ]);
  assertEquals(workingDirectory({ input: { cwd: `${CWD}/` } }), CWD);
  assertEquals(workingDirectory({ input: { cwd: "/" } }), null);
  assertEquals(workingDirectory({ bash_0: { cwd: CWD } }), null);
});

Deno.test("OpenCode basic through the real plugin and server: path arguments come from input.cwd, never from an earlier tool's output", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const file = `${dir.path}/plugin.js`;
  Deno.writeTextFileSync(
    file,
    hostCPluginSource({ url: srv.url, capture: "c" }),
  );
  const hooks = await (await import(`file://${file}`)).HarnessPlugin({});
  for (const f of scenarioFiles(`${HOSTS_DIR}/host_c/basic`)) {
    const rec = f.body as { hook: string; input: unknown; output: unknown };
    const fn = hooks[rec.hook];
    if (typeof fn !== "function") continue;
    if (rec.hook === "dispose") await fn();
    else if (rec.hook === "config" || rec.hook === "event") await fn(rec.input);
    else await fn(rec.input, rec.output);
  }
  const [episode] = normalizeAll(await loadEpisodes(srv.store, "c"));
  assertEquals(
    episode.steps.map((s) => [s.logical_tool, s.arg_lineage]),
    [
      ["read", { filePath: "$ref(input.cwd)/notes.txt" }],
      ["bash", { command: null, description: null }],
      ["write", { content: null, filePath: "$ref(input.cwd)/summary.txt" }],
      ["bash", { command: null, description: null }],
      ["read", { filePath: "$ref(input.cwd)/does-not-exist.txt" }],
    ],
  );
  // The read's output repeats the path's pieces; no argument points at it.
  const read0 = JSON.stringify(episode.steps[0].result);
  assertOk(read0.includes("agent-demo"));
  const stores = new Set(episode.steps.map((s) => s.store));
  for (const step of episode.steps) {
    for (const source of Object.values(step.arg_lineage)) {
      for (const m of (source ?? "").matchAll(/\$ref\(([A-Za-z0-9_]+)/g)) {
        assertOk(!stores.has(m[1]), `${step.node_id}: ${source}`);
      }
    }
  }
});
