/**
 * host_b (Gemini CLI): a failed tool call (`tool_response.error`, the
 * `toolerrors` scenario) keeps the error and what the model saw
 * (`llmContent`) and the user (`returnDisplay`), through the ingest
 * server's hook route.
 */
import { assertEquals } from "../_assert.ts";
import { HOSTS_DIR } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { captureEvents } from "./_host_a_replay.ts";

Deno.test("host_b: a failed read_file keeps its error, llmContent and returnDisplay (toolerrors, through /hook/host_b)", async () => {
  await using srv = await startServer();
  const files = scenarioFiles(`${HOSTS_DIR}/host_b/toolerrors`);
  for (const f of files) {
    const res = await fetch(`${srv.url}/hook/host_b?cap=b_err`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(f.body),
    });
    assertEquals((await res.json()).ok, true, f.name);
  }
  assertEquals((await srv.store.verifyCapture("b_err")).ok, true);
  const evs = await captureEvents(srv.store, "b_err");
  const failed = evs.filter((e) => e.kind === "tool.call.failed");
  assertEquals(failed.length, 1);
  const sent = files.find((f) =>
    f.name.endsWith("AfterTool.json") &&
    (f.body as { tool_response: { error?: unknown } }).tool_response.error
  )!.body as { tool_response: Record<string, unknown> };
  assertEquals(failed[0].payload.result, sent.tool_response);
  assertEquals(
    (failed[0].payload.result as Record<string, unknown>).llmContent,
    "Could not read file because no file was found at the specified path.",
  );
  assertEquals(
    (failed[0].payload.result as Record<string, unknown>).returnDisplay,
    "File not found.",
  );
  assertEquals(failed[0].payload.error, {
    message: "File not found: /home/dev/agent-demo/work/toolerrors/missing.txt",
    type: "file_not_found",
    outcome: "failed",
  });
});
