/**
 * host_a token counts against the host's own: a StopFailure keeps the turn
 * before the API failed, a compaction's summariser calls are marked
 * uncounted and capture inspect (and the report) say the count is partial,
 * a complete count is not called partial.
 */
import { captureReportData } from "../../lib/report/capture_data.ts";
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { forwardHook } from "../../lib/forwarder/forward.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";
import { formatInspection } from "../../lib/cli/format_capture.ts";
import {
  assistantTexts,
  copyTranscripts,
  forwardScenario,
  HOST_A,
  payloads,
  tokenSums,
} from "./_host_a_replay.ts";

/** The host's own totals: the last `cost-state` of the session transcript. */
function hostTotals(scenario: string, transcript: string): [number, number] {
  const lines = Deno.readTextFileSync(
    `${HOST_A}/${scenario}/_transcripts/${transcript}`,
  ).split("\n").filter((l) => l.includes('"type":"cost-state"'));
  const usage = Object.values(
    JSON.parse(lines.at(-1)!).modelUsage as Record<
      string,
      { inputTokens: number; outputTokens: number }
    >,
  );
  return [
    usage.reduce((s, u) => s + u.inputTokens, 0),
    usage.reduce((s, u) => s + u.outputTokens, 0),
  ];
}

Deno.test("StopFailure keeps the tokens of the turn before the API failed and the text the user saw (host_a apierror)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  const evs = await forwardScenario(srv, {
    scenario: "apierror",
    captureId: "cap_err",
    dir: dir.path,
  });
  // The transcript's one model call (its error turn is the host's own).
  assertEquals(tokenSums(evs), [100, 20, 1]);
  const failed = evs.find((e) => e.payload.type === "stop.failed")!;
  assertEquals(failed.payload.error, "unknown");
  assertEquals(
    failed.payload.last_message,
    "API Error: 400 lab: scripted API failure",
  );
  // The error text is what the host said, not a model answer.
  assertEquals(assistantTexts(evs), []);
  assertEquals(
    evs.filter((e) => e.kind === "model.responded").map((e) => e.source.model),
    ["claude-opus-5-5"],
  );
});

Deno.test("a compaction's summariser calls are marked uncounted and capture inspect says the count is partial (host_a compact)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  const evs = await forwardScenario(srv, {
    scenario: "compact",
    captureId: "cap_compact",
    dir: dir.path,
  });
  const counted = tokenSums(evs);
  const [hostIn, hostOut] = hostTotals(
    "compact",
    "10fe1e4b-6b10-4916-92fb-69c993c98f30.jsonl",
  );
  // What hooks can see is less than what the host spent.
  assertEquals(counted, [200, 40, 2]);
  assertEquals([hostIn, hostOut], [400, 80]);
  const partial = evs.filter((e) => e.payload.type === "usage.partial");
  assertEquals(
    partial.map((e) => [e.payload.agent_id, e.payload.reason]),
    [
      ["ae23b322616a97400", "transcript_missing"],
      ["abbeb36ad5d0c7b6b", "transcript_missing"],
    ],
  );
  const inspection = await inspectCapture(srv.store, "cap_compact");
  assertEquals(inspection.episodes.length, 1);
  assertEquals(inspection.episodes[0].tokens, {
    input: 200,
    output: 40,
    responses: 2,
    partial: true,
  });
  assertOk(
    formatInspection("cap_compact", inspection).includes("200/40 (partial)"),
  );
  // The HTML report says so too, per episode and over the capture.
  const report = await captureReportData(srv.store, "cap_compact");
  assertEquals(report.episodes[0].tokens, {
    input: 200,
    output: 40,
    partial: true,
  });
  assertEquals(report.figures.tokens.partial, true);
});

Deno.test("capture inspect does not call a complete count partial (host_a basic)", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  await copyTranscripts("basic", dir.path);
  for (const { body } of payloads("basic", dir.path)) {
    await forwardHook("host_a", body, {
      url: srv.url,
      captureId: "cap_whole",
      stateDir: `${dir.path}/state`,
      timeoutMs: 5000,
    });
  }
  const inspection = await inspectCapture(srv.store, "cap_whole");
  assertEquals(inspection.episodes[0].tokens, {
    input: 500,
    output: 100,
    responses: 5,
  });
});
