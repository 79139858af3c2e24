import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import { join } from "node:path";
import { streamJson } from "../../lib/importers/json_stream.ts";
import { planTrajectoryFile } from "../../lib/importers/import_file.ts";
import { convertTrajectories } from "../../lib/importers/trajectories.ts";
import { ImportError } from "../../lib/importers/import_error.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { tempDir } from "../_helpers.ts";

const SLICE = new URL("../../fixtures/tau2_retail_slice.json", import.meta.url);

async function* chunked(
  bytes: Uint8Array,
  size: number,
): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) {
    yield bytes.subarray(i, i + size);
  }
}

Deno.test("streamJson() yields a τ² file's members and simulations as JSON.parse reads them, whatever the chunk size", async () => {
  const bytes = Deno.readFileSync(SLICE);
  const whole = JSON.parse(new TextDecoder().decode(bytes));
  for (const size of [13, 4096]) {
    const members: Record<string, unknown> = {};
    const sims: unknown[] = [];
    for await (
      const p of streamJson(chunked(bytes, size), { listKey: "simulations" })
    ) {
      if (p.kind === "member") members[p.key] = p.value;
      if (p.kind === "item") sims[p.index] = p.value;
    }
    assertEquals(sims, whole.simulations, `chunks of ${size}`);
    const { simulations: _, ...rest } = whole;
    assertEquals(members, rest, `chunks of ${size}`);
  }
});

Deno.test("streamJson() reads a top-level list after a byte-order mark split over chunks, and refuses what is not JSON", async () => {
  const enc = new TextEncoder();
  const items: unknown[] = [];
  for await (
    const p of streamJson(
      chunked(enc.encode('\uFEFF[1, {"a": "]\\"},"}, "x"]'), 1),
      { listKey: "simulations" },
    )
  ) if (p.kind === "item") items.push(p.value);
  assertEquals(items, [1, { a: ']"},' }, "x"]);
  for (const bad of ['{"a":}', '{"a" 1}', "[1,2", "[1] x", "nope"]) {
    await assertRejects(async () => {
      for await (
        const _ of streamJson(chunked(enc.encode(bad), 3), {
          listKey: "simulations",
        })
      ) { /* read */ }
    }, ImportError);
  }
});

Deno.test("planTrajectoryFile() plans and writes the same episodes as the in-memory conversion", async () => {
  await using dir = await tempDir();
  const text = Deno.readTextFileSync(SLICE);
  const path = join(dir.path, "slice.json");
  Deno.writeTextFileSync(path, text);
  const now = () => new Date("2026-11-27T00:00:00.000Z");
  const whole = convertTrajectories(text, {
    format: "tau2",
    captureId: "cap",
    now,
  });
  const plan = await planTrajectoryFile({
    format: "tau2",
    path,
    captureId: "cap",
    now,
  });
  assertEquals(plan.digest, whole.digest);
  assertEquals(plan.episode_ids, whole.episodes.map((e) => e.episode_id));
  const events = whole.episodes.flatMap((e) => e.events);
  assertEquals(plan.events, events.length);
  using store = new HarnessStore(join(dir.path, "store"));
  await plan.write(store.sink("cap"));
  const stored = [];
  for await (const ev of store.readEvents("cap")) stored.push(ev);
  assertEquals(
    stored.map((e) => [e.episode_id, e.kind, e.payload]),
    events.map((e) => [e.episode_id, e.kind, e.payload]),
  );
  assertEquals(store.getCapture("cap")?.event_count, events.length);
});

Deno.test("planTrajectoryFile(): a file changed after it was checked is refused and leaves nothing", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "slice.json");
  Deno.writeTextFileSync(path, Deno.readTextFileSync(SLICE));
  const plan = await planTrajectoryFile({
    format: "tau2",
    path,
    captureId: "cap",
  });
  Deno.writeTextFileSync(path, " ", { append: true });
  using store = new HarnessStore(join(dir.path, "store"));
  const err = await assertRejects(
    () => plan.write(store.sink("cap")),
    ImportError,
  );
  assertMatch(err.message, /changed while it was imported/);
  assertEquals(store.captureIds(), []);
  assertOk(!store.hasCapture("cap"));
});

Deno.test("planTrajectoryFile() gives every episode its tools when the τ² file names them after its simulations", async () => {
  await using dir = await tempDir();
  const { simulations } = JSON.parse(Deno.readTextFileSync(SLICE));
  const path = join(dir.path, "late_info.json");
  Deno.writeTextFileSync(
    path,
    JSON.stringify({
      simulations: simulations.slice(0, 3),
      info: { environment_info: { domain_name: "retail", tool_defs: {} } },
    }),
  );
  const plan = await planTrajectoryFile({
    format: "tau2",
    path,
    captureId: "c",
  });
  using store = new HarnessStore(join(dir.path, "store"));
  await plan.write(store.sink("c"));
  const kinds = [];
  for await (const ev of store.readEvents("c")) kinds.push(ev.kind);
  assertEquals(kinds.length, plan.events);
  assertEquals(kinds.filter((k) => k === "toolset.exposed").length, 3);
});
