import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { join } from "node:path";
import { checkExportUrl, serve } from "../../lib/cli/cmd_serve.ts";
import { status } from "../../lib/cli/cmd_status.ts";
import { OtlpStreamer } from "../../lib/otel/stream.ts";
import { UsageError } from "../../lib/cli/io.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { generateDeskEpisodes } from "../../examples/order_desk/order_desk.ts";
import { tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

const SECRET = "hunter2";

/** One desk episode's events as a client sends them (unsealed). */
async function deskEvents(): Promise<unknown[]> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 1);
  const out: unknown[] = [];
  for await (const ev of store.readEvents("desk")) {
    const { sequence: _s, prev_event_hash: _p, event_hash: _h, ...rest } = ev;
    out.push(rest);
  }
  return out;
}

/** A loopback port nothing listens on (connections refused). */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("serve --export-otlp with a password in the URL: /health, status, the stop line and otlp_export.json mask it, also in last_error", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const collector = `http://user:${SECRET}@127.0.0.1:${closedPort()}/v1/traces`;
  let first = "";
  const lines: string[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((r) => stop = r);
  const done = serve({
    root,
    host: "127.0.0.1",
    port: 0,
    allowRemote: false,
    noRedact: false,
    stopSignal,
    exportOtlp: collector,
    exportOtlpIntervalMs: 20,
  }, {
    out: (t) => {
      lines.push(t);
      first ||= t;
    },
    err: (t) => lines.push(t),
  });
  await waitFor("the server's start line", () => first);
  const url = first.match(/on (http:\/\/[^ ]+)/)![1];
  const res = await fetch(`${url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(await deskEvents()),
  });
  assertEquals(res.status, 200, await res.text());
  const health: {
    otlp_export: { endpoint: string; last_error: string | null };
  } = await waitFor("the export's failure on /health", async () => {
    const h = await (await fetch(`${url}/health`)).json();
    return h.otlp_export.last_error ? h : null;
  });
  assertOk(health.otlp_export.last_error, "the failure is shown");
  assertEquals(
    health.otlp_export.endpoint,
    collector.replace(SECRET, "***"),
  );
  assertOk(!JSON.stringify(health).includes(SECRET), JSON.stringify(health));
  let shown = "";
  const code = await status({ root, json: false }, {
    out: (t) => shown += t + "\n",
    err: (t) => shown += t + "\n",
  });
  assertEquals(code, 0, shown);
  assertOk(shown.includes("user:***@127.0.0.1"), shown);
  assertOk(!shown.includes(SECRET), shown);
  stop();
  assertEquals(await done, 0);
  assertOk(!lines.join("\n").includes(SECRET), lines.join("\n"));
  const cursors = Deno.readTextFileSync(join(root, "otlp_export.json"));
  assertOk(!cursors.includes(SECRET), cursors);
});

Deno.test("--export-otlp: a refused URL is echoed with its password masked", () => {
  for (const bad of [`ftp://u:${SECRET}@127.0.0.1/x`, `u:${SECRET}@[::`]) {
    const err = assertThrows(() => checkExportUrl(bad), UsageError);
    assertOk(!err.message.includes(SECRET), err.message);
  }
});

Deno.test("OtlpStreamer: a cursor file that named the collector with its password keeps its cursors and loses the password", async () => {
  await using dir = await tempDir();
  const collector = `http://user:${SECRET}@127.0.0.1:${closedPort()}/v1/traces`;
  const path = join(dir.path, "otlp_export.json");
  using store = new HarnessStore(dir.path);
  const cursors = { c1: { sent: 7, replay_from: 3 } };
  Deno.writeTextFileSync(path, JSON.stringify({ [collector]: cursors }));
  const st = new OtlpStreamer(store, collector, { intervalMs: 10_000 });
  st.start();
  await st.close();
  const file = JSON.parse(Deno.readTextFileSync(path));
  assertEquals(file, {
    [collector.replace(SECRET, "***")]: cursors,
  });
});
