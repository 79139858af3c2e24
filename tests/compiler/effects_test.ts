import {
  assertEquals,
  assertMatch,
  assertOk,
  assertThrows,
} from "../_assert.ts";
import { join } from "node:path";
import { main } from "../../ingest.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import type { Episode } from "../../lib/lineage/records.ts";
import {
  describeEffects,
  looksReadOnly,
  resolveEffects,
} from "../../lib/compiler/effects.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import {
  episodeStarted,
  toolCallCompleted,
  toolCallStarted,
} from "../../lib/trace/mod.ts";
import { fixedContext, HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";

const SLICE = new URL("../../fixtures/tau2_retail_slice.json", import.meta.url);

/** Import a τ² file through `ingest.ts import` and read its episodes back. */
async function importTau2(dir: string, text: string): Promise<Episode[]> {
  const file = join(dir, "retail.json");
  Deno.writeTextFileSync(file, text);
  const root = join(dir, "store");
  const out: string[] = [];
  const code = await main(
    ["import", "--format", "tau2", file, "--capture", "retail", "--root", root],
    { out: (t) => out.push(t), err: (t) => out.push(t) },
  );
  assertEquals(code, 0, out.join("\n"));
  using store = new HarnessStore(root, { readOnly: true, index: false });
  return await loadEpisodes(store, "retail");
}

function lookupsOf(pkg: ReturnType<typeof compileBehavior>["package"]) {
  const root = pkg.ir.nodes[pkg.ir.root] as { kind: string; lookups?: [] };
  assertEquals(root.kind, "agent");
  return root.lookups ?? [];
}

Deno.test("compileBehavior() gives an imported τ² file lookup nodes with no effects given", async () => {
  await using dir = await tempDir();
  const text = Deno.readTextFileSync(SLICE);
  // The vendored slice is written compactly, without `environment_info`:
  // its reads are guessed from their names and marked so.
  const plain = compileBehavior(await importTau2(dir.path, text), {
    name: "retail",
  });
  assertOk(lookupsOf(plain.package).length > 0);
  const m = plain.package.manifest;
  assertEquals(m.effects.get_order_details, "read");
  assertEquals(m.effects_source?.get_order_details, "inferred");
  assertEquals(m.effects_source?.cancel_pending_order, "unknown");
  assertEquals(m.effects.cancel_pending_order, "write");
  assertEquals(m.effects_source?.transfer_to_human_agents, "unknown");
  assertEquals(plain.effects.unknown_calls.cancel_pending_order, 10);
  assertOk(plain.effects.inferred.includes("find_user_id_by_email"));

  // The same file as τ² writes it names its domain: τ²'s own declared tool
  // types decide, nothing is guessed.
  await using dir2 = await tempDir();
  const full = JSON.parse(text);
  full.info = {
    ...full.info,
    environment_info: { domain_name: "retail", policy: "", tool_defs: null },
  };
  const typedEpisodes = await importTau2(dir2.path, JSON.stringify(full));
  const typed = compileBehavior(typedEpisodes, { name: "retail" });
  assertOk(lookupsOf(typed.package).length > 0);
  const t = typed.package.manifest;
  assertEquals(typed.effects.inferred, []);
  assertEquals(typed.effects.unknown, []);
  assertEquals(t.effects_source?.get_order_details, "domain");
  assertEquals(t.effects.cancel_pending_order, "destructive");
  assertEquals(t.effects.transfer_to_human_agents, "write");
  assertEquals(t.effects.calculate, "read");
  assertEquals(describeEffects(typed.effects), [
    "effects of 16 tools: 16 from the benchmark's declared tool types",
  ]);

  // Saying every tool writes leaves nothing to look up: the override wins.
  const allWrite = Object.fromEntries(
    Object.keys(t.effects).map((k) => [k, "write"]),
  );
  const forced = compileBehavior(typedEpisodes, {
    name: "retail",
    effects: allWrite,
    form: "agent",
  });
  assertEquals(lookupsOf(forced.package), []);
  assertEquals(
    new Set(Object.values(forced.package.manifest.effects_source ?? {})),
    new Set(["override"]),
  );
});

Deno.test("resolveEffects() knows each host's built-in tools in a recorded host capture", async () => {
  await using srv = await startServer();
  for (const host of ["host_a", "host_b"]) {
    for (const f of scenarioFiles(`${HOSTS_DIR}/${host}/basic`)) {
      const res = await fetch(`${srv.url}/hook/${host}?cap=${host}_basic`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(f.body),
      });
      await res.body?.cancel();
    }
  }
  const a = resolveEffects(await loadEpisodes(srv.store, "host_a_basic"));
  assertEquals(a.effects, {
    Bash: "destructive",
    Read: "read",
    Write: "write",
  });
  assertEquals(a.source, { Bash: "host", Read: "host", Write: "host" });
  assertEquals(a.unknown, []);
  const b = resolveEffects(await loadEpisodes(srv.store, "host_b_basic"));
  assertEquals(b.effects, {
    read_file: "read",
    run_shell_command: "destructive",
    write_file: "write",
  });
  assertEquals(new Set(Object.values(b.source)), new Set(["host"]));
});

/** Episodes with the given calls (tool names), through a real store. */
async function recorded(
  root: string,
  episodes: string[][],
): Promise<Episode[]> {
  using store = new HarnessStore(root);
  const sink = store.sink("cap_x");
  episodes.forEach((tools, i) => {
    const ctx = fixedContext("cap_x", `ep_${i}`);
    sink.emit(episodeStarted(ctx, { reason: "test" }));
    tools.forEach((name, k) => {
      const tool = { host_name: name, logical_id: null };
      const start = toolCallStarted(ctx, {
        tool,
        arguments: { id: `U-${1000 + k}` },
      });
      sink.emit(start);
      sink.emit(
        toolCallCompleted(ctx, {
          tool,
          arguments: { id: `U-${1000 + k}` },
          result: { ok: true },
        }, { parentEventId: start.event_id }),
      );
    });
  });
  return await loadEpisodes(store, "cap_x");
}

Deno.test("compileBehavior() reports unknown tools with their calls, marks inferred ones, and lets an override win", async () => {
  await using dir = await tempDir();
  const eps = await recorded(dir.path, [
    ["get_weather", "frobnicate", "list_things"],
    ["get_weather", "frobnicate", "frobnicate"],
  ]);
  const r = compileBehavior(eps, {
    name: "x",
    effects: { list_things: "destructive", not_called: "read" },
  });
  const m = r.package.manifest;
  assertEquals(m.effects, {
    list_things: "destructive",
    not_called: "read",
    frobnicate: "write",
    get_weather: "read",
  });
  assertEquals(m.effects_source, {
    list_things: "override",
    not_called: "override",
    frobnicate: "unknown",
    get_weather: "inferred",
  });
  assertEquals(r.effects.unknown, ["frobnicate"]);
  assertEquals(r.effects.unknown_calls, { frobnicate: 3 });
  assertEquals(r.effects.inferred, ["get_weather"]);
  assertEquals(describeEffects(r.effects), [
    "effects of 4 tools: 2 given (--effects), 1 guessed read-only from their names, 1 unknown",
    "unknown effects (counted as state-changing): frobnicate (3 calls)",
    "3 recorded calls could not become lookups; pass --effects FILE to say which only read",
    'read-only by name only (effects_source "inferred"): get_weather; pass --effects FILE if any of them changes state',
  ]);
  // Same episodes, same package bytes.
  assertEquals(
    compileBehavior([...eps].reverse(), {
      name: "x",
      effects: { list_things: "destructive", not_called: "read" },
    }).package.digest,
    r.package.digest,
  );
  const err = assertThrows(
    () => resolveEffects(eps, { override: { frobnicate: "readonly" } }),
    TypeError,
  );
  assertMatch(err.message, /give "read", "write" or "destructive"/);
});

Deno.test("looksReadOnly() guesses read only from looking-up verbs", () => {
  for (
    const t of [
      "get_order",
      "mcp:everything/get-sum",
      "mcp__srv__list_items",
      "searchFiles",
      "calculate",
      "check",
    ]
  ) assertOk(looksReadOnly(t), t);
  for (
    const t of [
      "getaway",
      "cancel_order",
      "transfer_to_human_agents",
      "settings_get",
      "delete_get_x",
      "listen",
    ]
  ) assertEquals(looksReadOnly(t), false, t);
});
