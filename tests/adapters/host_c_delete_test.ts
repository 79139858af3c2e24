import { assertEquals } from "../_assert.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import { captureEvents } from "./_host_a_replay.ts";

type Hooks = Record<string, (...args: unknown[]) => Promise<void>>;

Deno.test("host_c: deleting a session that ended when its process disposed the plugin is recorded once (two_sessions)", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const file = `${dir.path}/plugin.js`;
  Deno.writeTextFileSync(
    file,
    hostCPluginSource({ url: srv.url, capture: "c_del" }),
  );
  const mod = await import(`file://${file}`);
  // Each OpenCode process loads its own plugin: a run per session, then
  // `session list` and `session delete` in processes of their own.
  let hooks: Hooks | null = null;
  let processes = 0;
  for (const f of scenarioFiles(`${HOSTS_DIR}/host_c/two_sessions`)) {
    const r = f.body as { hook: string; input: unknown; output: unknown };
    if (r.hook === "plugin.init") {
      hooks = await mod.HarnessPlugin(r.input);
      processes++;
      continue;
    }
    const fn = hooks?.[r.hook];
    if (typeof fn !== "function") continue;
    if (r.hook === "dispose") await fn();
    else if (r.hook === "config" || r.hook === "event") await fn(r.input);
    else await fn(r.input, r.output);
  }
  assertEquals(processes, 4);
  assertEquals((await srv.store.verifyCapture("c_del")).ok, true);
  const evs = await captureEvents(srv.store, "c_del");
  const deleted = "ses_dfee46bdaffeIUZDISOsISk1GA";
  const ends = evs.filter((e) => e.kind === "episode.finished").map((e) => [
    e.episode_id,
    e.payload.reason,
  ]);
  assertEquals(ends, [
    [deleted, "disposed"],
    ["ses_dfee45b3affeETiZRg2q0Er5t1", "disposed"],
  ]);
  const marks = evs.filter((e) =>
    e.kind === "annotation" && e.payload.type === "session.deleted"
  );
  assertEquals(marks.map((e) => e.episode_id), [deleted]);
  assertEquals(marks[0].actor, "host");
  assertEquals(marks[0].sequence, evs.at(-1)!.sequence);
});
