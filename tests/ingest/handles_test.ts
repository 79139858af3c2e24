import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import { messageEventJson, tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";
import { startServeProcess } from "../../bench/_reliability.ts";

const event = (i: number) => messageEventJson(`evt_handles_${i}`, "handles");

Deno.test("ingest server out of file handles (200 idle connections under a 128 limit) keeps answering and keeps handles for the store: idle ones are closed to stay below the limit, nothing acknowledged is lost, /health counts it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  // A cap above the handle limit, so that accept itself runs out of handles.
  const { child, url } = await startServeProcess(root, {
    ulimit: 128,
    args: ["--max-connections", "1000"],
  });
  const { port } = new URL(url);
  const post = (i: number) =>
    fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: event(i),
    });
  try {
    assertEquals((await post(0)).status, 200);
    // Use up the server's handles with idle connections, and keep them.
    const idle: Deno.TcpConn[] = [];
    for (let i = 0; i < 200; i++) {
      idle.push(
        await Deno.connect({ hostname: "127.0.0.1", port: Number(port) }),
      );
    }
    try {
      // While they are open, a new request is still answered (the oldest
      // idle connections give their handles up); until then it may be
      // refused (503, retry-after) or not accepted yet, and is sent again.
      const status = await waitFor("an answer while flooded", async () => {
        try {
          const res = await post(1);
          await res.body?.cancel();
          return res.status === 200 ? 200 : 0;
        } catch {
          return 0; // not accepted yet
        }
      }, { everyMs: 100 });
      assertEquals(status, 200, "the server answers while flooded");
      const health = await (await fetch(`${url}/health`)).json();
      const c = health.stats.connections;
      assertOk(c.accept_errors >= 1, JSON.stringify(c));
      assertOk(
        /Too many open files/.test(c.last_accept_error),
        c.last_accept_error,
      );
      assertOk(c.evicted >= 1, JSON.stringify(c));
      // Connections are kept a reserve below the limit, so the store can
      // still open a new capture's spool while the flood goes on.
      assertOk(c.handle_cap >= 1 && c.handle_cap < 128, JSON.stringify(c));
      const fresh = await fetch(`${url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: messageEventJson("evt_handles_new", "handles_new"),
      });
      assertEquals(fresh.status, 200, await fresh.text());
    } finally {
      for (const c of idle) c.close();
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
  using store = new HarnessStore(root);
  const ids: string[] = [];
  for await (const ev of store.readEvents("handles")) ids.push(ev.event_id);
  assertEquals(ids, ["evt_handles_0", "evt_handles_1"]);
  const fresh: string[] = [];
  for await (const ev of store.readEvents("handles_new")) {
    fresh.push(ev.event_id);
  }
  assertEquals(fresh, ["evt_handles_new"]);
});
