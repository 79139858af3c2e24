/**
 * Issue 32, item 5 ("Compile from it"), and issue 42, item 5 (no header
 * of ours): τ² retail conversations driven through the model gateway by an
 * unmodified agent loop on the official `openai` client (`_retail_agent.ts`:
 * τ²'s own message list, the agent's greeting first; the capture is the
 * active one, each episode the one the gateway finds, read back from the
 * answers to mark outcomes), with the real retail environment and the
 * repository's scripted model server as the upstream (it replays the
 * recorded agent), compile to the same lookups and choice tools as the
 * same conversations imported with `import --format tau2`.
 *
 * What the two captures hold differently, and why it does not reach the
 * packages compared here:
 *
 * - effects: the vendored slice has no `info.environment_info.domain_name`,
 *   so its import carries no typed toolset (effects guessed from names, and
 *   only for the tools called), while the gateway's `toolset.exposed` has
 *   all 16 tools' JSON schemas and no annotations (the uncalled write tools
 *   would then be `unknown`, and `choice.unseen_tools` would differ). Both
 *   compiles get the same effects: τ²-bench's declared retail tool types
 *   (`tau2_tool_types.ts`), as the importer would record them for a file
 *   that names its domain.
 * - the outcome: τ²'s reward is not on the wire; it is marked on the
 *   gateway's episodes with `CaptureCoordinator.markOutcome`, the way a
 *   user marks outcomes (the agent form does not read it; the tree form's
 *   skeleton does).
 * - episode ids: the gateway's (`gw_<uuid>`), the importer's
 *   `tau2_<task>_<trial>`; no source names an episode.
 * - both record τ²'s greeting (the gateway as the conversation's history);
 *   the importer also records the user's last message (the
 *   one ending in `###STOP###`, which the loop does not send, as the
 *   closed loop does not), `episode.finished` and the task in
 *   `episode.started` (`input.task`); the gateway records the model's
 *   requests and answers. None of these changes a normalized step's
 *   tool, arguments, argument lineage or result (`input.task` is only in
 *   the import's `state_before`); checked on all 32 simulations of the
 *   slice when this test was written.
 * - sources are compared as sets: their order follows the episodes' ids
 *   (with other ids the same sources come in another order).
 *
 * Two more steps: a tool answer `Error: …` on the Chat Completions wire is
 * a failed call, as the importer has it; and every task run twice (the
 * same first request, the same greeting) is two episodes, every call
 * recorded once in its own.
 *
 * @module
 */
import OpenAI from "openai";
import { join } from "node:path";
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { tempDir } from "../_helpers.ts";
import { main as ingestMain } from "../../ingest.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { CaptureCoordinator } from "../../lib/control/coordinator.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import type { Episode } from "../../lib/lineage/records.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import type { Effects } from "../../lib/package/tool_effects.ts";
import type { AnyNode as IrNode, BoundArg } from "../../lib/forms/mod.ts";
import { effectFromAnnotations } from "../../lib/compiler/effects.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import { sameContent } from "../../eval/envs/tau2/mod.ts";
import { scriptFromTau2 } from "../../eval/scripted_model.ts";
import { startScriptedModelServer } from "../../eval/scripted_model_server.ts";
import {
  tau2DomainTools,
  tau2ToolAnnotations,
} from "../../lib/importers/tau2_tool_types.ts";
import { type RetailAgentRun, runRetailAgent } from "./_retail_agent.ts";

const FIXTURES = new URL("../../fixtures/", import.meta.url);
const read = (name: string) => Deno.readTextFileSync(new URL(name, FIXTURES));

/** A simulation of the vendored τ² retail slice. */
interface Sim {
  id: string;
  task_id: string;
  trial?: number;
  reward_info?: { reward?: number };
  messages: {
    role: string;
    id?: string;
    content?: string | null;
    tool_calls?: { id: string; name: string; arguments: unknown }[] | null;
  }[];
}

/** The slice's first ten simulations; the fifth (task 4) has tool answers `Error: …`. */
const FIRST = 10;
const WITH_ERRORS = 4;

const INSTRUCTIONS =
  "You are a customer service agent of a retail store: help the user with their orders, returns, exchanges and account using the tools.";

/** τ²-bench's declared retail tool types as effects (what a typed import says). */
function retailEffects(): Effects {
  return Object.fromEntries(
    tau2DomainTools("retail").map((t) => [
      t,
      effectFromAnnotations(tau2ToolAnnotations("retail", t))!,
    ]),
  );
}

function sorted<T>(xs: readonly T[]): T[] {
  return xs.map((x) => [canonicalJson(x), x] as const)
    .sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
    .map(([, x]) => x);
}

/** An argument with its sources as a set (their order follows the episodes' ids). */
const argSet = (a: BoundArg) => ({
  path: a.path,
  sources: a.sources === null ? null : sorted(a.sources),
});

/**
 * What the comparison looks at: the agent root's cap, every lookup node
 * (tool, arguments with their sources, its own cap) and the choice leaf
 * (each tool with its effect and its arguments' sources, and the unseen
 * state-changing tools). Node ids and provenance are left out.
 */
function agentShape(pkg: BehaviorPackage) {
  const nodes = pkg.ir.nodes as Record<string, IrNode>;
  const root = nodes[pkg.ir.root];
  if (root?.kind !== "agent") {
    throw new Error(`expected the agent form, got ${root?.kind}`);
  }
  const lookups = sorted(root.lookups.map((id) => {
    const n = nodes[id];
    if (n.kind !== "lookup") throw new Error(`${id} is not a lookup`);
    return { tool: n.tool, args: n.args.map(argSet), fanout: n.fanout ?? null };
  }));
  const c = root.choice === null ? null : nodes[root.choice];
  if (c !== null && c.kind !== "choice") throw new Error("not a choice leaf");
  return {
    fanout: root.fanout,
    lookups,
    choice: c === null ? null : {
      tools: sorted(c.tools.map((t) => ({ ...t, args: t.args.map(argSet) }))),
      unseen_tools: sorted(c.unseen_tools ?? []),
    },
  };
}

/** Choice arguments (`tool argument`) with a source `a` has and `b` has not. */
function addedChoiceSources(
  a: ReturnType<typeof agentShape>,
  b: ReturnType<typeof agentShape>,
): string[] {
  const keyed = (s: typeof a) =>
    new Set(
      (s.choice?.tools ?? []).flatMap((t) =>
        t.args.flatMap((arg) =>
          (arg.sources ?? []).map((src) =>
            `${t.tool} ${arg.path} ${canonicalJson(src)}`
          )
        )
      ),
    );
  const inB = keyed(b);
  return [
    ...new Set(
      [...keyed(a)].filter((k) => !inB.has(k)).map((k) =>
        k.split(" ").slice(0, 2).join(" ")
      ),
    ),
  ].sort();
}

/** The tool calls a simulation recorded, with the tool's answer. */
function recordedCalls(sim: Sim) {
  const answers = new Map(
    sim.messages.filter((m) => m.role === "tool").map((m) => [
      m.id,
      m.content ?? "",
    ]),
  );
  return sim.messages.flatMap((m) =>
    m.role === "assistant"
      ? (m.tool_calls ?? []).map((c) => ({
        name: c.name,
        arguments: c.arguments,
        content: answers.get(c.id) ?? "",
      }))
      : []
  );
}

/** Tool calls started in a capture's episodes. */
const startedCalls = (eps: Episode[]) =>
  eps.flatMap((e) => e.events).filter((e) => e.kind === "tool.call.started")
    .length;

Deno.test("the model gateway's capture of τ² retail conversations compiles to the lookups and choice tools of their τ² import", async (t) => {
  const slice = JSON.parse(read("tau2_retail_slice.json"));
  const first: Sim[] = slice.simulations.slice(0, FIRST);
  const clean = first.filter((_, i) => i !== WITH_ERRORS);
  const errored = [first[WITH_ERRORS]];
  const db = JSON.parse(read("tau2_retail_db.json"));
  const effects = retailEffects();
  const writes = new Set(
    Object.keys(effects).filter((tool) => effects[tool] !== "read"),
  );

  // The upstream serves one script id; each episode replaces the script.
  await using scripted = startScriptedModelServer({ writes });
  const base = scripted.addScript({ ...scriptFromTau2(first[0]), id: "live" });
  await using srv = await startServer({
    modelGateway: { upstreamOpenai: base, upstreamAnthropic: base },
  });
  // No header of ours: the client is as a user writes it; the capture is
  // the one `capture start` made active.
  const client = new OpenAI({
    baseURL: `${srv.url}/v1`,
    apiKey: "sk-gateway-test",
    maxRetries: 0,
  });
  const gateway = new CaptureCoordinator(srv.store);
  const drive = async (capture: string, sims: Sim[], times = 1) => {
    gateway.startCapture({ id: capture, activate: true });
    const runs: { sim: Sim; run: RetailAgentRun }[] = [];
    for (const sim of sims) {
      const script = scriptFromTau2(sim);
      for (let k = 0; k < times; k++) {
        scripted.addScript({ ...script, id: "live" });
        const run = await runRetailAgent({
          client,
          db,
          users: script.users,
          instructions: INSTRUCTIONS,
        });
        // Each run's answers name one episode.
        assertEquals(run.episodes.length, 1, sim.id);
        runs.push({ sim, run });
      }
    }
    return runs;
  };
  const gwRuns = await drive("gw", clean);
  const runs = gwRuns.map((r) => r.run);
  const errRuns = await drive("gw_err", errored);
  const twice = await drive("gw_twice", clean, 2);
  await srv.server.modelGateway!.settled();
  assertEquals(srv.server.modelGateway!.stats.record_misses, 0);
  // Outcomes on the episodes the answers named, as a user marks them.
  for (
    const [capture, done] of [["gw", gwRuns], ["gw_err", errRuns]] as const
  ) {
    for (const { sim, run } of done) {
      const reward = sim.reward_info?.reward ?? 0;
      gateway.markOutcome(capture, run.episodes[0], {
        success: reward >= 1,
        outcome: { reward },
      });
    }
  }

  // The τ² import of the same conversations, through the CLI.
  await using dir = await tempDir();
  const importRoot = join(dir.path, "imported");
  for (
    const [capture, sims] of [["tau2", clean], ["tau2_err", errored]] as const
  ) {
    const file = join(dir.path, `${capture}.json`);
    Deno.writeTextFileSync(
      file,
      JSON.stringify({ ...slice, simulations: sims }),
    );
    const code = await ingestMain(
      [
        "import",
        file,
        "--format",
        "tau2",
        "--capture",
        capture,
        "--root",
        importRoot,
      ],
      { out: () => {}, err: () => {} },
    );
    assertEquals(code, 0);
  }
  using importStore = new HarnessStore(importRoot);
  const imported = new CaptureCoordinator(importStore);
  const compile = async (
    coordinator: CaptureCoordinator,
    captures: string[],
  ) => {
    const out = join(dir.path, `pkg_${captures.join("_")}`);
    const r = await coordinator.compile(captures, {
      name: "retail",
      effects,
      out,
    });
    return agentShape(r.package);
  };

  await t.step(
    "the agent loop makes the recorded calls and gets the recorded answers",
    () => {
      runs.forEach((run, i) => {
        const want = recordedCalls(clean[i]);
        assertEquals(run.ended, "user_end", clean[i].id);
        assertEquals(
          run.calls.map((c) => [c.name, canonicalJson(c.arguments)]),
          want.map((c) => [c.name, canonicalJson(c.arguments)]),
          clean[i].id,
        );
        run.calls.forEach((c, k) =>
          assertOk(
            sameContent(want[k].content, c.content),
            `${clean[i].id} call ${k} (${c.name})`,
          )
        );
      });
    },
  );

  await t.step(
    "both packages have the same lookups and the same choice tools",
    async () => {
      const gwEpisodes = await loadEpisodes(srv.store, "gw");
      assertEquals(
        gwEpisodes.map((e) => e.episode_id).sort(),
        runs.map((r) => r.episodes[0]).sort(),
      );
      assertEquals(gwEpisodes.length, clean.length);
      assertEquals(
        startedCalls(gwEpisodes),
        startedCalls(await loadEpisodes(importStore, "tau2")),
      );
      const gw = await compile(gateway, ["gw"]);
      const im = await compile(imported, ["tau2"]);
      // Enough to mean something: the lookups chain from the user's words to
      // orders, and the choice leaf restricts several writes.
      assertEquals(
        im.lookups.map((l) => l.tool),
        [
          "find_user_id_by_email",
          "find_user_id_by_name_zip",
          "get_order_details",
          "get_user_details",
        ],
      );
      assertOk((im.choice?.tools.length ?? 0) >= 4, "a choice leaf of writes");
      assertEquals(gw.fanout, im.fanout);
      assertEquals(gw.lookups, im.lookups);
      assertEquals(gw.choice, im.choice);
    },
  );

  await t.step(
    "a Chat Completions tool answer `Error: …` is a failed call, as the importer has it, so the packages agree",
    async () => {
      // The wire has no error flag on a `role: "tool"` message: the
      // recorder takes the importers' rule (a result that says `Error: …`).
      const failedIn = (eps: Episode[]) =>
        eps.flatMap((e) => e.events).flatMap((e) => {
          const tool = (e.payload.tool as { host_name: string })?.host_name;
          if (e.kind === "tool.call.failed") {
            return [[tool, (e.payload.error as { message: string }).message]];
          }
          const r = e.payload.result;
          return e.kind === "tool.call.completed" && typeof r === "string" &&
              r.startsWith("Error:")
            ? [[tool, `completed: ${r}`]]
            : [];
        });
      const expected = [
        ["find_user_id_by_email", "Error: User not found"],
        [
          "modify_pending_order_items",
          "Error: New item 3778566150 not found or available",
        ],
      ];
      assertEquals(
        failedIn(await loadEpisodes(importStore, "tau2_err")),
        expected,
      );
      assertEquals(failedIn(await loadEpisodes(srv.store, "gw_err")), expected);
      const gw = await compile(gateway, ["gw", "gw_err"]);
      const im = await compile(imported, ["tau2", "tau2_err"]);
      assertEquals(gw.lookups, im.lookups);
      assertEquals(gw.choice, im.choice);
      assertEquals(addedChoiceSources(im, gw), []);
      assertEquals(addedChoiceSources(gw, im), []);
    },
  );

  await t.step(
    "every task run twice (the same greeting, the same first request) is two episodes, every call recorded once in its own",
    async () => {
      // τ²'s conversations all open with the system prompt and the same
      // greeting, and a second run sends the first run's first request
      // again: neither joins them. The scripted upstream's call ids restart
      // per script (`call_scripted_1` …), so joined episodes would drop calls.
      const eps = await loadEpisodes(srv.store, "gw_twice");
      const recorded = clean.reduce((n, s) => n + recordedCalls(s).length, 0);
      assertEquals(eps.length, 2 * clean.length);
      assertEquals(
        eps.map((e) => e.episode_id).sort(),
        twice.map((r) => r.run.episodes[0]).sort(),
      );
      assertEquals(startedCalls(eps), 2 * recorded);
      for (const ep of eps) {
        const ids = ep.events.filter((e) => e.kind === "tool.call.started")
          .map((e) => e.payload.host_call_id);
        assertEquals(new Set(ids).size, ids.length, ep.episode_id);
      }
      // The second run of each task names the first as what it forked from.
      const forked = eps.flatMap((e) =>
        e.events.filter((x) =>
          x.kind === "episode.started" && x.payload.forked_from !== undefined
        )
      );
      assertEquals(forked.length, clean.length);
    },
  );
});
