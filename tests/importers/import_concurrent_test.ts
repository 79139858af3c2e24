/**
 * Issue 44, item 12: imports through a running server are idempotent per
 * file. The CLI checks the store, then posts; two imports of one file at
 * once both passed the check and both were taken (12 `episode.started` for
 * 6 episodes). The server now decides, as the events arrive, with no wait
 * between its check and its write: one import is taken, the other refused
 * with 409.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { basename } from "node:path";
import { runMain } from "../_cli.ts";
import { startServer } from "../_server.ts";
import { planTrajectoryFile } from "../../lib/importers/import_file.ts";
import { postImport } from "../../lib/cli/import_via_server.ts";
import type { UnsealedEvent } from "../../lib/trace/event.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { tempDir } from "../_helpers.ts";

const FIXTURE =
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url).pathname;

const opts = { sanitizeOps: false, sanitizeResources: false };

async function fileEvents(capture: string) {
  const plan = await planTrajectoryFile({
    format: "tau2",
    path: FIXTURE,
    captureId: capture,
    fileName: basename(FIXTURE),
    tools: null,
  });
  const events: UnsealedEvent[] = [];
  for await (const batch of plan.batches()) events.push(...batch);
  return { plan, events };
}

async function startedIn(store: HarnessStore, capture: string) {
  const out: string[] = [];
  if (!store.hasCapture(capture)) return out;
  for await (const ev of store.readEvents(capture)) {
    if (ev.kind === "episode.started") out.push(ev.episode_id);
  }
  return out;
}

Deno.test({
  ...opts,
  name:
    "two posts of one file's import at once (each past the CLI's check): the server takes one, refuses the other with 409, and each episode is started once",
  async fn() {
    await using srv = await startServer();
    const { plan, events } = await fileEvents("imp2");
    for (let trial = 0; trial < 3; trial++) {
      const capture = `imp2_${trial}`;
      const mine = events.map((e) => ({ ...e, capture_id: capture }));
      const results = await Promise.allSettled([
        postImport({ url: srv.url, events: mine, root: srv.root }),
        postImport({ url: srv.url, events: mine, root: srv.root }),
      ]);
      const taken = results.filter((r) => r.status === "fulfilled");
      const refused = results.filter((r) => r.status === "rejected");
      assertEquals([taken.length, refused.length], [1, 1], `trial ${trial}`);
      const why = String((refused[0] as PromiseRejectedResult).reason);
      assertOk(/already imported/.test(why), why);
      assertOk(/nothing was imported/.test(why), why);
      const started = await startedIn(srv.store, capture);
      assertEquals(started.length, plan.episode_ids.length);
      assertEquals(new Set(started).size, started.length);
    }
  },
});

Deno.test({
  ...opts,
  name:
    "two CLI imports of one file at once through the running server: one imports, the other exits 1 saying so",
  async fn() {
    await using srv = await startServer();
    const args = [
      "import",
      "--format",
      "tau2",
      FIXTURE,
      "--capture",
      "imp_cli",
      "--root",
      srv.root,
      "--json",
    ];
    const runs = await Promise.all([runMain(args), runMain(args)]);
    const codes = runs.map((r) => r.code).sort();
    assertEquals(codes, [0, 1], runs.map((r) => r.err).join("\n"));
    const failed = runs.find((r) => r.code === 1)!;
    assertOk(/already (imported|has episode)/.test(failed.err), failed.err);
    const summary = JSON.parse(runs.find((r) => r.code === 0)!.out);
    const started = await startedIn(srv.store, "imp_cli");
    assertEquals(started.length, summary.episodes);
  },
});

Deno.test({
  ...opts,
  name:
    "after a restart the server still refuses a file the capture holds (read from the spool), and an import restarting an episode the capture has; other /ingest events are taken as before",
  async fn() {
    await using dir = await tempDir();
    const { events } = await fileEvents("imp_r");
    {
      using store = new HarnessStore(dir.path, { role: "ingest-server" });
      const server = new IngestServer(store, { port: 0, modelGateway: false });
      const url = await server.start();
      assertOk(await postImport({ url, events, root: dir.path }) > 0);
      await server.close();
    }
    using store = new HarnessStore(dir.path, { role: "ingest-server" });
    const server = new IngestServer(store, { port: 0, modelGateway: false });
    const url = await server.start();
    try {
      const before = Deno.readTextFileSync(store.spoolPath("imp_r"));
      const again = await fetch(`${url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(events),
      });
      assertEquals(again.status, 409);
      const body = await again.json();
      assertOk(/already imported into capture "imp_r"/.test(body.error));
      // Another file (another digest) that restarts an episode: refused.
      const first = events.find((e) => e.kind === "episode.started")!;
      const other = {
        ...first,
        payload: {
          ...first.payload,
          provenance: { file_sha256: `sha256:${"e".repeat(64)}` },
        },
      };
      const clash = await fetch(`${url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(other),
      });
      assertEquals(clash.status, 409);
      assertOk(/already has episode/.test((await clash.json()).error));
      assertEquals(Deno.readTextFileSync(store.spoolPath("imp_r")), before);
      // An event with no import provenance goes in as always.
      const note = events.find((e) => e.kind === "message")!;
      const plain = await fetch(`${url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(note),
      });
      assertEquals(plain.status, 200);
      await plain.body?.cancel();
    } finally {
      await server.close();
    }
  },
});
