import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";

/** Play a recorded host_c scenario through the real plugin into a real server. */
async function play(scenario: string): Promise<TraceEvent[]> {
  await using srv = await startServer();
  await using dir = await tempDir();
  const file = `${dir.path}/plugin.js`;
  Deno.writeTextFileSync(
    file,
    hostCPluginSource({ url: srv.url, capture: "c" }),
  );
  const hooks = await (await import(`file://${file}`)).HarnessPlugin({});
  for (const f of scenarioFiles(`${HOSTS_DIR}/host_c/${scenario}`)) {
    const rec = f.body as { hook: string; input: unknown; output: unknown };
    const fn = hooks[rec.hook];
    if (typeof fn !== "function") continue;
    if (rec.hook === "dispose") await fn();
    else if (rec.hook === "config" || rec.hook === "event") await fn(rec.input);
    else await fn(rec.input, rec.output);
  }
  const out: TraceEvent[] = [];
  for await (const e of srv.store.readEvents("c")) out.push(e);
  return out;
}

function errorOf(e: TraceEvent): Record<string, unknown> {
  return e.payload.error as Record<string, unknown>;
}

Deno.test("host_c episodes carry the session's working directory and the assistant's text", async () => {
  const evs = await play("basic");
  const started = evs.filter((e) => e.kind === "episode.started");
  assertOk(started.length > 0);
  for (const e of started) {
    assertEquals(e.payload.cwd, "/home/dev/agent-demo/work/basic");
  }
  const said = evs.filter((e) =>
    e.kind === "message" && e.payload.role === "assistant"
  ).map((e) => e.payload.text as string);
  assertEquals(said[0], "I'll start by reading the notes.");
  assertOk(said.at(-1)!.startsWith("Done: read notes.txt"));
  // The exit-1 shell command: failed, with its exit code.
  const failed = evs.filter((e) => e.kind === "tool.call.failed");
  const exits = failed.filter((e) => errorOf(e).type === "exit_code");
  assertEquals(exits.map((e) => [errorOf(e).exit_code, errorOf(e).outcome]), [
    [1, "failed"],
  ]);
});

Deno.test("host_c: a rejected permission and a denying rule are refused; a deleted session ends once", async () => {
  const evs = await play("permission");
  const failed = evs.filter((e) => e.kind === "tool.call.failed");
  assertEquals(
    failed.map((e) => errorOf(e).outcome).sort(),
    ["refused", "refused"],
  );
  const two = await play("two_sessions");
  const ends = two.filter((e) => e.kind === "episode.finished").map((e) =>
    e.episode_id
  );
  assertEquals(ends.length, new Set(ends).size);
});

Deno.test("host_c: every episode of every recorded scenario has the session's working directory", async () => {
  for (
    const scenario of [
      "basic",
      "command",
      "mcp",
      "permission",
      "subagent",
      "two_sessions",
    ]
  ) {
    const started = (await play(scenario)).filter((e) =>
      e.kind === "episode.started"
    );
    assertOk(started.length > 0, scenario);
    for (const e of started) {
      assertEquals(
        e.payload.cwd,
        `/home/dev/agent-demo/work/${scenario}`,
        scenario,
      );
    }
  }
});
