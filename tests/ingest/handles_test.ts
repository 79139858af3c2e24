import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import { tempDir } from "../_helpers.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

function event(i: number): string {
  return JSON.stringify({
    schema_version: "harness.trace.v1",
    event_id: `evt_handles_${i}`,
    capture_id: "handles",
    episode_id: "ep_1",
    timestamp: "2026-11-23T00:00:00.000Z",
    source: { host: "test", adapter: "test", model: null },
    actor: "user",
    kind: "message",
    parent_event_id: null,
    payload: { role: "user", text: `hello ${i}` },
  });
}

Deno.test("ingest server out of file handles (idle connections past a 128 limit) does not die: it listens again once handles are free, nothing acknowledged is lost, /health counts it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const child = new Deno.Command("bash", {
    args: [
      "-c",
      `ulimit -n 128 && exec "$0" run --allow-read=${root} --allow-write=${root} --allow-net=127.0.0.1 --allow-env=HARNESS_ROOT,HARNESS_INGEST_TOKEN ${INGEST} serve --root ${root} --port 0`,
      Deno.execPath(),
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.getReader();
  let text = "";
  while (!/on (http:\/\/\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server did not start: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  const url = /on (http:\/\/\S+)/.exec(text)![1];
  const { port } = new URL(url);
  const post = (i: number) =>
    fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: event(i),
    });
  try {
    assertEquals((await post(0)).status, 200);
    // Exhaust the server's handles with idle connections.
    const idle: Deno.TcpConn[] = [];
    for (let i = 0; i < 200; i++) {
      try {
        idle.push(
          await Deno.connect({ hostname: "127.0.0.1", port: Number(port) }),
        );
      } catch {
        break; // refused: the listener is down, as expected past the limit
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    for (const c of idle) c.close();
    // Once the handles are back, it answers again (within a few seconds).
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      try {
        const res = await post(1);
        status = res.status;
        await res.body?.cancel();
      } catch { /* not listening yet */ }
    }
    assertEquals(status, 200, "the server answers again");
    const health = await (await fetch(`${url}/health`)).json();
    assertOk(
      health.stats.listener_restarts >= 1,
      JSON.stringify(health.stats),
    );
    assertOk(/Too many open files/.test(health.stats.last_listener_error));
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
  using store = new HarnessStore(root);
  const ids: string[] = [];
  for await (const ev of store.readEvents("handles")) ids.push(ev.event_id);
  assertEquals(ids, ["evt_handles_0", "evt_handles_1"]);
});
