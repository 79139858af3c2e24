import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { runMain } from "../_cli.ts";
import { convertTrajectories } from "../../lib/importers/trajectories.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { tempDir } from "../_helpers.ts";

/** The real τ²-bench retail slice, parsed. */
function retail(): { simulations: Record<string, unknown>[] } {
  return JSON.parse(
    Deno.readTextFileSync(
      new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
    ),
  );
}

/** A τ² file of the first real simulation, changed by `edit`. */
function oneSimulation(
  edit: (sim: Record<string, unknown>) => void = () => {},
): string {
  const d = retail();
  const sim = structuredClone(d.simulations[0]);
  edit(sim);
  return JSON.stringify({ ...d, simulations: [sim] });
}

/** The first tool call of a simulation's messages. */
function firstCall(sim: Record<string, unknown>): Record<string, unknown> {
  const m = (sim.messages as Record<string, unknown>[]).find((m) =>
    Array.isArray(m.tool_calls) && m.tool_calls.length > 0
  )!;
  return (m.tool_calls as Record<string, unknown>[])[0];
}

function spools(root: string): string[] {
  try {
    return [...Deno.readDirSync(join(root, "captures"))].map((e) => e.name);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** `ingest.ts import --format tau2 FILE --capture ID --root ROOT`, in-process. */
function importTau2(
  file: string,
  { capture, root }: { capture: string; root: string },
): ReturnType<typeof runMain> {
  return runMain([
    "import",
    file,
    "--format",
    "tau2",
    "--capture",
    capture,
    "--root",
    root,
  ]);
}

Deno.test("convertTrajectories() gives 2,000 τ² simulations of one (task, trial) unique, valid episode ids", () => {
  const d = retail();
  const sims = Array.from(
    { length: 2000 },
    (_, i) => ({ ...d.simulations[0], id: `sim_${i}` }),
  );
  const c = convertTrajectories(JSON.stringify({ ...d, simulations: sims }), {
    format: "tau2",
    captureId: "dup",
  });
  const ids = c.episodes.map((e) => e.episode_id);
  assertEquals(new Set(ids).size, 2000);
  assertOk(ids.every((id) => id.length <= 128), "an id is too long");
  assertEquals(ids.slice(0, 3), ["tau2_0_0", "tau2_0_0_2", "tau2_0_0_3"]);
});

Deno.test("import tau2 records 150 simulations of one (task, trial), each its own episode", async () => {
  await using dir = await tempDir();
  const d = retail();
  const file = join(dir.path, "dup.json");
  Deno.writeTextFileSync(
    file,
    JSON.stringify({
      ...d,
      simulations: Array.from({ length: 150 }, () => d.simulations[0]),
    }),
  );
  const root = join(dir.path, "store");
  const r = await importTau2(file, { capture: "dup", root: root });
  assertEquals(r.code, 0, r.err);
  using store = new HarnessStore(root, { readOnly: true });
  assertEquals(store.listEpisodes("dup").length, 150);
});

Deno.test("import tau2 accepts a file that starts with a UTF-8 byte-order mark", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "bom.json");
  Deno.writeTextFileSync(file, "\uFEFF" + oneSimulation());
  const root = join(dir.path, "store");
  const r = await importTau2(file, { capture: "bom", root: root });
  assertEquals(r.code, 0, r.err);
  assertMatch(r.out, /Imported 1 episode \(/);
});

Deno.test("import tau2 refuses a trial of 1e400 naming the field, and leaves no capture behind", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "inf.json");
  Deno.writeTextFileSync(
    file,
    oneSimulation((s) => s.trial = 7).replace('"trial":7', '"trial":1e400'),
  );
  const root = join(dir.path, "store");
  const r = await importTau2(file, { capture: "inf", root: root });
  assertEquals(r.code, 1);
  assertMatch(r.err, /simulation 0: "trial" is Infinity, not a finite number/);
  assertMatch(r.err, /nothing was imported/);
  assertEquals(spools(root), []);
});

Deno.test("import tau2 refuses tool arguments 20,000 levels deep naming the depth limit, and leaves no capture behind", async () => {
  await using dir = await tempDir();
  const deep = '{"a":'.repeat(20_000) + "1" + "}".repeat(20_000);
  const file = join(dir.path, "deep.json");
  Deno.writeTextFileSync(
    file,
    oneSimulation((s) => firstCall(s).arguments = { deep: "DEEP" })
      .replace('"DEEP"', deep),
  );
  const root = join(dir.path, "store");
  const r = await importTau2(file, { capture: "deep", root: root });
  assertEquals(r.code, 1);
  assertMatch(
    r.err,
    /message \d+: tool\.call\.started payload\.arguments\.deep\.a.*nested deeper than the limit of 64 levels/,
  );
  assertOk(!/call stack/.test(r.err), r.err);
  assertEquals(spools(root), []);
});

Deno.test({
  name: "import creates the store root owner-only (0700), as serve does",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "one.json");
    Deno.writeTextFileSync(file, oneSimulation());
    const root = join(dir.path, "store");
    const r = await importTau2(file, { capture: "one", root: root });
    assertEquals(r.code, 0, r.err);
    assertEquals(Deno.statSync(root).mode! & 0o777, 0o700);
  },
});
