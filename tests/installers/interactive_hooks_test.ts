import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { isHarnessEntry } from "../../lib/installers/hook_settings.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { quiet } from "./_quiet.ts";
import { hangGuard } from "../_wait.ts";

const SCENARIO = `${HOSTS_DIR}/host_b/interactive`;

/** The recorded payloads in arrival order (`_index.tsv`). */
function recorded(): { event: string; body: string }[] {
  return Deno.readTextFileSync(`${SCENARIO}/_index.tsv`).trim().split("\n")
    .map((line) => {
      const [seq, event] = line.split("\t");
      return {
        event,
        body: Deno.readTextFileSync(`${SCENARIO}/${seq}-${event}.json`),
      };
    });
}

interface Entry {
  command: string;
  timeout: number;
}

/** Run one command hook as Gemini CLI does: a shell, the payload on stdin, its project variables. */
async function runHook(
  entry: Entry,
  o: { body: string; cwd: string },
): Promise<{ code: number; stdout: string }> {
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", entry.command],
    cwd: o.cwd,
    env: { GEMINI_PROJECT_DIR: o.cwd, CLAUDE_PROJECT_DIR: o.cwd },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  // The host kills a hook at its time-out; how soon a hook ends is
  // `deno task bench hooks`'s to measure. Here only a hang is cut short.
  using _guard = hangGuard(child);
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(o.body)).catch(() => {});
  await w.close().catch(() => {});
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
  };
}

async function kinds(
  store: { readEvents(id: string): AsyncGenerator<TraceEvent> },
  capture: string,
): Promise<TraceEvent[]> {
  const out: TraceEvent[] = [];
  for await (const e of store.readEvents(capture)) out.push(e);
  return out;
}

Deno.test("an interactive Gemini CLI session played through the installed hook commands: every hook exits 0 with {}, order kept, every event arrives", async () => {
  const { main } = await import("../../ingest.ts");
  await using srv = await startServer();
  await using dir = await tempDir();
  assertEquals(
    await main([
      "install",
      "gemini-cli",
      "--project",
      dir.path,
      "--url",
      srv.url,
      "--capture",
      "tui",
    ], quiet),
    0,
  );
  const settings = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".gemini/settings.json")),
  ) as { hooks: Record<string, { hooks: unknown[] }[]> };
  const hooksOf = (event: string): Entry[] =>
    (settings.hooks[event] ?? []).flatMap((g) => g.hooks)
      .filter((e) => isHarnessEntry(e, "host_b")) as Entry[];
  // The host runs each hook to the end before it acts on the next keystroke.
  const played: { event: string; body: string }[] = [];
  for (const p of recorded()) {
    for (const entry of hooksOf(p.event)) {
      const r = await runHook(entry, { body: p.body, cwd: dir.path });
      assertEquals([r.code, r.stdout], [0, "{}\n"], p.event);
      played.push(p);
    }
  }
  // Every payload but the ones no harness hook is installed for
  // (BeforeModel) went through a hook, the tool-approval Notification too.
  assertEquals(played.length, 18);
  // The same payloads posted straight to the server give the same events.
  for (const p of played) {
    const res = await fetch(`${srv.url}/hook/host_b?cap=direct`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: p.body,
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
  const viaHooks = await kinds(srv.store, "tui");
  const direct = await kinds(srv.store, "direct");
  assertEquals(
    viaHooks.map((e) => [e.kind, e.episode_id]),
    direct.map((e) => [e.kind, e.episode_id]),
  );
  assertEquals((await srv.store.verifyCapture("tui")).ok, true);
  // Order kept: each episode starts before the user's message in it.
  const firstEpisode = viaHooks[0].episode_id;
  const started = viaHooks.findIndex((e) =>
    e.kind === "episode.started" && e.episode_id === firstEpisode
  );
  const userMessage = viaHooks.findIndex((e) =>
    e.kind === "message" && (e.payload as { role?: string }).role === "user"
  );
  assertOk(
    started >= 0 && userMessage > started,
    JSON.stringify({
      started,
      userMessage,
    }),
  );
  assertEquals(
    viaHooks.filter((e) => e.kind === "episode.started").length,
    2,
    "the session and the one /clear started",
  );
});
