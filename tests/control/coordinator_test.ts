import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import {
  CaptureCoordinator,
  CaptureExistsError,
} from "../../lib/control/coordinator.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import {
  argumentLeaves,
  normalizeEpisode,
} from "../../lib/lineage/normalize.ts";
import { findAllSources } from "../../lib/lineage/find_source.ts";
import { isMeaningful } from "../../lib/lineage/meaningful.ts";
import { resolvePath } from "../../lib/lineage/paths.ts";
import { readActiveCapture } from "../../lib/store/active_capture.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioDirs, scenarioFiles, startServer } from "../_server.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";

const HOSTS = `${HOSTS_DIR}`;

async function replayAll(url: string, dir: string): Promise<string[]> {
  const caps: string[] = [];
  for (const host of ["host_a", "host_b", "host_c"]) {
    for (const scenario of scenarioDirs(`${HOSTS}/${host}`)) {
      const cap = `${host}_${scenario.replaceAll("/", "_")}`;
      caps.push(cap);
      const files = scenarioFiles(`${HOSTS}/${host}/${scenario}`);
      if (host !== "host_c") {
        for (const f of files) {
          const res = await fetch(`${url}/hook/${host}?cap=${cap}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(f.body),
          });
          await res.body?.cancel();
        }
        continue;
      }
      const file = `${dir}/p_${cap}.js`;
      Deno.writeTextFileSync(
        file,
        hostCPluginSource({ url }).replace(
          '"/hook/host_c"',
          `"/hook/host_c?cap=${cap}"`,
        )
          .replace('(cap ? "?cap=" + encodeURIComponent(cap) : "")', '""'),
      );
      const hooks = await (await import(`file://${file}`)).HarnessPlugin({});
      for (const f of files) {
        const r = f.body as { hook: string; input: unknown; output: unknown };
        const fn = hooks[r.hook];
        if (typeof fn !== "function") continue;
        if (r.hook === "dispose") await fn();
        else if (r.hook === "config" || r.hook === "event") await fn(r.input);
        else await fn(r.input, r.output);
      }
    }
  }
  return caps;
}

Deno.test("recorded host sessions: every identifier a later call reuses from an earlier result is attributed to a path holding it", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const caps = await replayAll(srv.url, dir.path);
  const coord = new CaptureCoordinator(srv.store);
  let reused = 0;
  for (const cap of caps) {
    const report = await coord.lineageReport(cap);
    assertEquals(report.chain.ok, true, cap);
    assertOk(
      ["F1", "F2"].includes(report.fidelity),
      `${cap}: ${report.fidelity}`,
    );
    for (const ep of await loadEpisodes(srv.store, cap)) {
      const norm = normalizeEpisode(ep);
      const reported = report.episodes.find((e) =>
        e.episode_id === ep.episode_id
      )!;
      for (const step of norm.steps) {
        for (const { path, value } of argumentLeaves(step.arguments)) {
          if (!isMeaningful(value)) continue;
          const results = Object.fromEntries(
            Object.entries(step.state_before).filter(([k]) => k !== "input"),
          );
          const brute = findAllSources(value, results);
          const source = step.arg_lineage[path];
          if (brute.length > 0) {
            reused++;
            assertOk(
              source,
              `${cap} step ${step.index} ${path}=${value} has sources ${brute}`,
            );
          }
          if (source && !source.includes("$ref(")) {
            assertEquals(
              resolvePath(step.state_before, source),
              value,
              `${cap} ${source}`,
            );
          }
          for (const m of (source ?? "").matchAll(/\$ref\(([^)]*)\)/g)) {
            const v = resolvePath(step.state_before, m[1]);
            assertOk(
              v !== undefined && String(value).includes(String(v)),
              `${cap} ${m[1]}`,
            );
          }
          const arg = reported.steps[step.index].arguments.find((a) =>
            a.arg === path
          )!;
          assertEquals(arg.source, source ?? null);
        }
      }
    }
  }
  console.log(
    `lineage over ${caps.length} recorded captures: ${reused} reused identifiers, all attributed`,
  );
});

Deno.test("lineage over a coding-agent capture: ids printed by one command and used in the next are attributed, in templates", async () => {
  await using srv = await startServer();
  const s = "sess-coding";
  const post = (body: unknown) =>
    fetch(`${srv.url}/hook/host_a?cap=coding`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    })
      .then((r) => r.body?.cancel());
  const call = async (id: string, command: string, stdout: string) => {
    const common = {
      session_id: s,
      tool_name: "Bash",
      tool_input: { command },
      tool_use_id: id,
    };
    await post({ ...common, hook_event_name: "PreToolUse" });
    await post({
      ...common,
      hook_event_name: "PostToolUse",
      tool_response: { stdout, stderr: "" },
    });
  };
  await post({
    session_id: s,
    hook_event_name: "SessionStart",
    source: "startup",
  });
  await post({
    session_id: s,
    hook_event_name: "UserPromptSubmit",
    prompt: "Settle the pending invoice",
  });
  await call("t1", "grep -l pending invoices/*", "pending: INV-2210\n");
  await call(
    "t2",
    "cat invoices/INV-2210.txt",
    '{"invoice": "INV-2210", "owner": "U-981", "amount": 1250}',
  );
  await call(
    "t3",
    'grep "^U-981," users.csv',
    "U-981,Ana Lima,ana@example.com\n",
  );
  await call("t4", "mail ana@example.com --amount 1250", "sent");
  const report = await new CaptureCoordinator(srv.store).lineageReport(
    "coding",
  );
  const steps = report.episodes[0].steps;
  assertEquals(
    steps[1].arguments[0].source,
    "cat invoices/$ref(Bash_0.stdout~word[1]).txt",
  );
  assertEquals(
    steps[2].arguments[0].source,
    'grep "^$ref(Bash_1.stdout~json.owner)," users.csv',
  );
  assertEquals(
    steps[3].arguments[0].source,
    "mail $ref(Bash_2.stdout~word[3]) --amount $ref(Bash_1.stdout~json.amount)",
  );
  assertEquals(steps[1].arguments[0].kind, "template");
  assertEquals(report.episodes[0].counts.attributed, 4);
  assertEquals(report.correlation, { host_call_id: 4 });
});

Deno.test("CaptureCoordinator: start, outcome, summary and finish, all as chained events; the report is byte-identical twice", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const coord = new CaptureCoordinator(store);
  const { capture_id } = coord.startCapture({ id: "cap_c", label: "trial" });
  assertEquals(readActiveCapture(dir.path), "cap_c");
  assertThrows(() => coord.startCapture({ id: "cap_c" }), CaptureExistsError);
  store.sink("cap_c").emit({
    schema_version: "harness.trace.v1",
    event_id: "evt_x",
    capture_id,
    episode_id: "ep_1",
    timestamp: "2026-11-22T00:00:00.000Z",
    source: { host: "t", adapter: "t", model: null },
    actor: "tool",
    kind: "tool.call.completed",
    parent_event_id: null,
    payload: {
      tool: { host_name: "get", logical_id: null },
      arguments: { id: "A-1000" },
      result: {},
    },
  });
  coord.markOutcome("cap_c", "ep_1", {
    success: true,
    note: "refunded",
    outcome: { amount: 5 },
  });
  const summary = await coord.summarize("cap_c");
  assertEquals(summary.outcomes.ep_1, {
    success: true,
    outcome: { amount: 5, note: "refunded" },
  });
  assertEquals(summary.chain.ok, true);
  assertEquals(summary.active, true);
  const a = JSON.stringify(await coord.lineageReport("cap_c"));
  const b = JSON.stringify(await coord.lineageReport("cap_c"));
  assertEquals(a, b);
  assertEquals(JSON.parse(a).episodes[0].success, true);
  coord.finishCapture("cap_c");
  assertEquals(readActiveCapture(dir.path), null);
  assertEquals(store.getCapture("cap_c")?.status, "finished");
  assertEquals(store.getCapture("cap_c")?.label, "trial");
  assertThrows(
    () => coord.markOutcome("nope", "ep", { success: true }),
    /not found/,
  );
});
