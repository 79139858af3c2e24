/**
 * A recorded Claude Code session (`fixtures/hosts/host_a/basic` hooks, its
 * model requests in `fixtures/model_requests/host_a/basic`) played through
 * the hooks `install claude-code --gateway` writes, as the host runs them
 * (http hooks posted, command hooks run in a shell), with each model
 * request through the gateway in between: the turn ends read no transcript
 * (they are http hooks), and the episode still holds every text once (the
 * words between calls from the gateway, the last from Stop) and the
 * gateway's tokens (issue #43 item 4).
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { runMain } from "../_cli.ts";
import { isHarnessEntry } from "../../lib/installers/hook_settings.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import {
  recordedRequests,
  sessionOf,
  startRecordedUpstream,
  usageOf,
} from "../model_gateway/_claude_code.ts";

const KEY = "sk-ant-api03-test-key-never-stored-0123456789";

type Entry = { type: string; url?: string; command?: string };

/** Run one command hook as Claude Code does: a shell, the payload on stdin. */
async function runHook(command: string, body: string, cwd: string) {
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", command],
    cwd,
    env: { CLAUDE_PROJECT_DIR: cwd },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(body)).catch(() => {});
  await w.close().catch(() => {});
  const out = await child.output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

/** Each scenario's texts, in order: the gateway's and the hooks'. */
const SAID: Record<string, string[]> = {
  basic: [
    "model_gateway: I will read the notes first.",
    "host_a: All done: read the notes (answer 42), said hi, wrote out.txt, and the last command failed with exit 1.",
  ],
  // The subagent's last answer is the gateway's (SubagentStop says none);
  // the recordings come from two runs, so the texts differ from Stop's.
  subagent: [
    "model_gateway: Delegating to a helper agent.",
    "model_gateway: Done (request 3).",
    "host_a: The helper says notes.txt has 3 lines.",
  ],
};

for (const scenario of ["basic", "subagent"]) {
  Deno.test(`Claude Code ${scenario} through the hooks of install claude-code --gateway: the turn ends are http hooks, and the episode holds each text once and the gateway's tokens`, async () => {
    const bodies = recordedRequests(scenario);
    const session = sessionOf(bodies[0]);
    await using up = startRecordedUpstream(bodies);
    await using srv = await startServer({
      modelGateway: { upstreamAnthropic: up.url },
    });
    await using dir = await tempDir();
    const project = join(dir.path, "project");
    await Deno.mkdir(project);
    const r = await runMain([
      "install",
      "claude-code",
      "--project",
      project,
      "--url",
      srv.url,
      "--capture",
      "cc",
      "--gateway",
    ]);
    assertEquals(r.code, 0, r.err);
    const settings = JSON.parse(
      Deno.readTextFileSync(join(project, ".claude/settings.json")),
    ) as { hooks: Record<string, { hooks: Entry[] }[]> };
    const entryOf = (event: string): Entry => {
      const list = (settings.hooks[event] ?? []).flatMap((g) => g.hooks)
        .filter((e) => isHarnessEntry(e, "host_a"));
      assertEquals(list.length, 1, event);
      return list[0];
    };
    const dirA = `${HOSTS_DIR}/host_a/${scenario}`;
    const hooks = [...Deno.readDirSync(dirA)].map((e) => e.name)
      .filter((n) => n.endsWith(".json")).sort()
      .map((n) => {
        const p = JSON.parse(Deno.readTextFileSync(join(dirA, n)));
        // Both sides of one session (the recordings come from two runs).
        return { ...p, session_id: session } as Record<string, unknown>;
      });
    let transcriptReads = 0;
    const hook = async (p: Record<string, unknown>) => {
      const event = p.hook_event_name as string;
      const e = entryOf(event);
      if (
        ["Stop", "SessionEnd", "SubagentStop", "PreCompact"].includes(event)
      ) {
        assertEquals(e.type, "http", `${event} reads no transcript`);
      }
      const body = JSON.stringify(p);
      if (e.type === "http") {
        const res = await fetch(e.url!, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await res.body?.cancel();
        assertOk(res.status === 204 || res.status === 200, event);
      } else {
        if (/ingest\.ts'? hook host_a/.test(e.command!)) transcriptReads++;
        const out = await runHook(e.command!, body, project);
        assertEquals([out.code, out.stdout], [0, ""], event);
      }
    };
    const model = async (k: number) => {
      const res = await fetch(`${srv.url}/v1/messages?beta=true`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": KEY,
          "anthropic-version": "2023-06-01",
          "x-harness-capture": "cc",
        },
        body: JSON.stringify(bodies[k]),
      });
      await res.text();
      assertEquals(res.status, 200);
      await srv.server.modelGateway!.settled();
    };
    // As the session ran: the prompt, then each answer and the calls it made.
    await hook(hooks[0]);
    await hook(hooks[1]);
    let k = 0;
    for (const p of hooks.slice(2)) {
      const event = p.hook_event_name as string;
      const answered = ["PreToolUse", "SubagentStop", "Stop"].includes(event);
      if (answered && k < bodies.length) {
        await model(k++);
      }
      await hook(p);
    }
    assertEquals(k, bodies.length);
    assertEquals(transcriptReads, 1, "only SessionStart runs a command");
    const evs: TraceEvent[] = [];
    for await (const e of srv.store.readEvents("cc")) evs.push(e);
    assertEquals([...new Set(evs.map((e) => e.episode_id))], [session]);
    // Each text once: the words between calls (the gateway's), the last (Stop's).
    const said = evs.filter((e) =>
      e.kind === "message" && e.payload.role === "assistant"
    ).map((e) => `${e.source.host}: ${e.payload.text}`);
    assertEquals(said, SAID[scenario]);
    // The calls are the hooks', each once; the tokens the gateway's.
    const started = evs.filter((e) => e.kind === "tool.call.started");
    assertEquals(
      started.length,
      hooks.filter((p) => p.hook_event_name === "PreToolUse").length,
    );
    assertEquals(started.every((e) => e.source.host === "host_a"), true);
    assertEquals(
      evs.filter((e) =>
        e.kind === "model.responded" && e.source.host !== "model_gateway"
      ).length,
      0,
      "no transcript turn",
    );
    const inspection = await inspectCapture(srv.store, "cc");
    const want = bodies.map((_, i) => usageOf(i));
    assertEquals(inspection.episodes[0].tokens, {
      input: want.reduce((s, u) => s + u.input_tokens, 0),
      output: want.reduce((s, u) => s + u.output_tokens, 0),
      responses: bodies.length,
      source: "model_gateway",
    });
    assertOk(inspection.episodes[0].finished);
  });
}
