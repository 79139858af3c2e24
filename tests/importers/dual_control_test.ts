import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { main } from "../../ingest.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import { tempDir } from "../_helpers.ts";

/** Four successful τ² telecom simulations (see fixtures/TAU2_SOURCE.md). */
const SLICE = Deno.readTextFileSync(
  new URL("../../fixtures/tau2_telecom_slice.json", import.meta.url),
);

interface Msg {
  role: string;
  id?: string;
  requestor?: string;
  tool_calls?: { id: string; name: string; requestor?: string }[] | null;
}
interface Slice {
  simulations: { id: string; task_id: string; messages: Msg[] }[];
}

function slice(): Slice {
  return JSON.parse(SLICE);
}

async function run(args: string[]) {
  let out = "", err = "";
  const code = await main(args, {
    out: (t) => out += t + "\n",
    err: (t) => err += t + "\n",
  });
  return { code, out, err };
}

async function importFile(root: string, file: string, capture: string) {
  return await run([
    "import",
    file,
    "--format",
    "tau2",
    "--capture",
    capture,
    "--root",
    root,
    "--json",
  ]);
}

/** The tools each party called in the slice. */
function toolsByParty(s: Slice): { user: Set<string>; agent: Set<string> } {
  const user = new Set<string>(), agent = new Set<string>();
  for (const sim of s.simulations) {
    for (const m of sim.messages) {
      for (const c of m.tool_calls ?? []) {
        (m.role === "user" ? user : agent).add(c.name);
      }
    }
  }
  return { user, agent };
}

function toolOf(ev: TraceEvent): string {
  return (ev.payload.tool as { host_name: string }).host_name;
}

/** Every tool a compiled IR may call or offer. */
function irTools(nodes: Record<string, IrNode>): Set<string> {
  const out = new Set<string>();
  for (const n of Object.values(nodes)) {
    if (n.kind === "action" || n.kind === "lookup") out.add(n.tool);
    if (n.kind === "react") n.tools.forEach((t) => out.add(t));
    if (n.kind === "choice") n.tools.forEach((t) => out.add(t.tool));
  }
  return out;
}

Deno.test("import tau2 telecom: the user's device calls and their results are tool events with actor user", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "telecom.json");
  Deno.writeTextFileSync(file, SLICE);
  const r = await importFile(join(dir.path, "s"), file, "tel");
  assertEquals(r.code, 0, r.err);
  assertEquals(JSON.parse(r.out).episodes, 4);
  using store = new HarnessStore(join(dir.path, "s"));
  assertEquals((await store.verifyCapture("tel")).ok, true);
  const eps = await loadEpisodes(store, "tel");
  const { user, agent } = toolsByParty(slice());
  assertOk(user.has("check_status_bar") && agent.has("get_details_by_id"));
  let userCalls = 0;
  for (const ep of eps) {
    const calls = ep.events.filter((e) => e.kind.startsWith("tool.call."));
    for (const ev of calls) {
      const byUser = user.has(toolOf(ev));
      assertEquals(ev.actor === "user", byUser, `${toolOf(ev)} ${ev.kind}`);
      if (byUser && ev.kind === "tool.call.started") userCalls++;
      if (ev.kind !== "tool.call.started") {
        const start = calls.find((s) => s.event_id === ev.parent_event_id)!;
        assertEquals(toolOf(start), toolOf(ev));
      }
    }
  }
  // 3 + 3 + 2 + 3 user-side calls in the four simulations.
  assertEquals(userCalls, 11);
  const shown = eps[1].events.find((e) =>
    e.actor === "user" && e.kind === "tool.call.completed"
  )!;
  assertEquals(
    shown.payload.result,
    "Status Bar: 📶¹ Poor | 2G | 📱 Data Enabled | 🔋 80%",
  );
});

Deno.test("compileBehavior() on telecom never makes a user-side call a step, nor offers or calls it", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "telecom.json");
  Deno.writeTextFileSync(file, SLICE);
  assertEquals((await importFile(join(dir.path, "s"), file, "tel")).code, 0);
  using store = new HarnessStore(join(dir.path, "s"));
  const eps = await loadEpisodes(store, "tel");
  // The agent form (the one for conversations) offers lookups and writes.
  const r = compileBehavior(eps, { name: "telecom", form: "agent" });
  const { user, agent } = toolsByParty(slice());
  const steps = r.normalized.flatMap((n) => n.steps.map((s) => s.logical_tool));
  assertEquals(steps.filter((t) => user.has(t)), []);
  assertEquals(new Set(steps), agent);
  const offered = irTools(r.compiled.ir.nodes as Record<string, IrNode>);
  assertOk(offered.has("get_customer_by_phone"), [...offered].join(", "));
  assertEquals([...offered].filter((t) => user.has(t)), []);
  // What the device showed is bound with what the user said: simulation 3
  // looks the device up after the status bar showed no signal.
  const device = r.normalized[3].steps.find((s) => s.arguments.id === "D1001")!;
  const said = (device.state_before.input as { user: string[] }).user;
  assertOk(
    said.includes("Status Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%"),
    said.join("\n"),
  );
});

/** Every file under a folder with its bytes, to compare a store before and after. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) walk(p);
      else if (e.name !== "harness.lock") {
        out[p.slice(root.length)] = btoa(
          String.fromCharCode(...Deno.readFileSync(p).subarray(0, 4096)),
        ) + `:${Deno.statSync(p).size}`;
      }
    }
  };
  walk(root);
  return out;
}

Deno.test("a user-side call without its result, or a result naming the other party's call, is an ImportError naming the simulation and message; nothing is written", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "s");
  const good = join(dir.path, "telecom.json");
  Deno.writeTextFileSync(good, SLICE);
  assertEquals((await importFile(root, good, "tel")).code, 0);
  const cases: [string, (s: Slice) => void, RegExp][] = [
    [
      "user call without result",
      (s) => {
        s.simulations[1].messages.splice(12, 1);
      },
      /trajectory 1 \(task \[mobile_data_issue\]bad_network_preference\[PERSONA:Hard\], simulation [0-9a-f-]{36}\), message 11: the user's call of check_status_bar \(id call_\w+\) has no tool result/,
    ],
    [
      "assistant call answered as the user's",
      (s) => {
        s.simulations[0].messages[5].requestor = "user";
      },
      /trajectory 0 \(task [^)]*, simulation [0-9a-f-]{36}\), message 5: a tool result marked requestor "user" answers the assistant's call of get_customer_by_phone \(id call_\w+, message 4\)/,
    ],
    [
      "user call answered as the assistant's",
      (s) => {
        s.simulations[2].messages[12].requestor = "assistant";
      },
      /trajectory 2 \(task [^)]*, simulation [0-9a-f-]{36}\), message 12: a tool result marked requestor "assistant" answers the user's call of check_status_bar \(id call_\w+, message 11\)/,
    ],
    [
      "a user message carrying a call marked as the assistant's",
      (s) => {
        s.simulations[3].messages[9].tool_calls![0].requestor = "assistant";
      },
      /trajectory 3 \(task [^)]*, simulation [0-9a-f-]{36}\), message 9, tool call 0: the call of check_status_bar is marked requestor "assistant" on a user message/,
    ],
  ];
  using before = new HarnessStore(root);
  const events = async () => {
    const out: string[] = [];
    for await (const ev of before.readEvents("tel")) out.push(ev.event_hash);
    return out;
  };
  const hashes = await events();
  const captures = before.listCaptures().map((c) => c.capture_id);
  before.close();
  const files = snapshot(root);
  for (const [label, edit, pattern] of cases) {
    const s = slice();
    edit(s);
    const bad = join(dir.path, "bad.json");
    Deno.writeTextFileSync(bad, JSON.stringify(s));
    // Into the same capture and into a new one: neither gets anything.
    for (const capture of ["tel", "fresh"]) {
      const r = await importFile(root, bad, capture);
      assertEquals(r.code, 1, `${label}: ${r.out}`);
      const error = String(JSON.parse(r.err).error);
      assertMatch(error, pattern, `${label}: ${error}`);
      assertMatch(error, /nothing was imported$/, label);
    }
  }
  assertEquals(snapshot(root), files);
  using after = new HarnessStore(root);
  assertEquals(after.hasCapture("fresh"), false);
  assertEquals(after.listCaptures().map((c) => c.capture_id), captures);
  const now: string[] = [];
  for await (const ev of after.readEvents("tel")) now.push(ev.event_hash);
  assertEquals(now, hashes);
});
