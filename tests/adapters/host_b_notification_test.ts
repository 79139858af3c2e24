import { assertEquals } from "../_assert.ts";
import { HOSTS_DIR } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { hostBToEvents } from "../../lib/adapters/gemini_cli.ts";
import { captureEvents } from "./_host_a_replay.ts";

const INTERACTIVE = `${HOSTS_DIR}/host_b/interactive`;

Deno.test("host_b: the tool-approval Notification of an interactive session is a permission request linked to its call (interactive)", async () => {
  await using srv = await startServer();
  // The files in arrival order, as the fixture's index lists them.
  const order = Deno.readTextFileSync(`${INTERACTIVE}/_index.tsv`).trim()
    .split("\n").map((l) => l.split("\t")[0]);
  const files = scenarioFiles(INTERACTIVE);
  assertEquals(files.map((f) => f.name.slice(0, 3)), order);
  for (const f of files) {
    const res = await fetch(`${srv.url}/hook/host_b?cap=b_tui`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(f.body),
    });
    assertEquals((await res.json()).ok, true, f.name);
  }
  assertEquals((await srv.store.verifyCapture("b_tui")).ok, true);
  const evs = await captureEvents(srv.store, "b_tui");
  const asks = evs.filter((e) => e.payload.type === "permission.requested");
  assertEquals(asks.length, 1);
  const [ask] = asks;
  const call = evs.find((e) => e.kind === "tool.call.started")!;
  assertEquals(ask.actor, "host");
  assertEquals(ask.parent_event_id, call.event_id);
  assertEquals(ask.payload.tool, "run_shell_command");
  assertEquals(ask.payload.arguments, call.payload.arguments);
  assertEquals(ask.payload.notification_type, "ToolPermission");
  assertEquals(
    (ask.payload.details as { command: string }).command,
    "echo hello > hello.txt",
  );
  // The host's own timestamp, between the call's start and its end.
  assertEquals(ask.timestamp, "2026-11-22T02:31:50.717Z");
});

Deno.test("hostBToEvents() keeps a Notification it cannot tie to one call, unlinked", () => {
  const note = scenarioFiles(INTERACTIVE).find((f) =>
    f.name.includes("Notification")
  )!.body as Record<string, unknown>;
  const other = { ...note, notification_type: "SomethingElse" };
  const [permission] = hostBToEvents(note, { captureId: "cap" });
  assertEquals(permission.payload.type, "permission.requested");
  assertEquals(permission.payload.tool, null);
  assertEquals(permission.parent_event_id, null);
  const [shown] = hostBToEvents(other, { captureId: "cap" });
  assertEquals(shown.payload.type, "notification.shown");
  assertEquals(shown.payload.message, note.message);
});
