import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { join } from "node:path";
import {
  BlobError,
  HarnessStore,
  isBlobRef,
  StoreLockedError,
} from "../../lib/store/mod.ts";
import { InvalidIdError } from "../../lib/trace/ids.ts";
import {
  annotation,
  toolCallCompleted,
  toolCallStarted,
} from "../../lib/trace/mod.ts";
import { EventShapeError } from "../../lib/trace/validate.ts";
import { fixedContext, tempDir } from "../_helpers.ts";

function fill(store: HarnessStore, captureId: string, episodes: number): void {
  const sink = store.sink(captureId);
  for (let e = 0; e < episodes; e++) {
    const ctx = fixedContext(captureId, `ep_${e}`);
    const start = sink.emit(
      toolCallStarted(ctx, {
        tool: { host_name: "get", logical_id: null },
        arguments: { id: `A-${e}` },
      }),
    );
    sink.emit(
      toolCallCompleted(ctx, {
        tool: { host_name: "get", logical_id: null },
        arguments: { id: `A-${e}` },
        result: { ok: true, e },
      }, { parentEventId: start.event_id }),
    );
  }
}

Deno.test("HarnessStore lays out harness.db, captures/<id>.jsonl and blobs/sha256", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  fill(store, "cap_a", 2);
  store.sync();
  for (const p of ["harness.db", "captures/cap_a.jsonl", "blobs/sha256"]) {
    assertOk(Deno.statSync(join(dir.path, p)), p);
  }
  const cap = store.getCapture("cap_a")!;
  assertEquals(cap.event_count, 4);
  assertEquals(cap.episode_count, 2);
  assertEquals(store.countsByKind("cap_a"), {
    "tool.call.completed": 2,
    "tool.call.started": 2,
  });
  assertEquals(store.listEpisodes("cap_a").map((e) => e.episode_id), [
    "ep_0",
    "ep_1",
  ]);
});

Deno.test("HarnessStore.ingest() validates the envelope and reassigns sequence and hashes", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const ev = annotation(fixedContext("cap_i"), { type: "note" });
  const sealed = store.ingest({
    ...ev,
    sequence: 77,
    event_hash: "sha256:" + "0".repeat(64),
  });
  assertEquals(sealed.sequence, 1);
  assertOk(sealed.event_hash !== "sha256:" + "0".repeat(64));
  assertThrows(
    () => store.ingest({ ...ev, schema_version: "v0" }),
    EventShapeError,
  );
  assertThrows(
    () => store.ingest({ ...ev, capture_id: "../../etc/passwd" }),
    EventShapeError,
  );
  assertThrows(() => store.sink("../escape"), InvalidIdError);
  assertEquals(store.getCapture("cap_i")!.event_count, 1);
});

Deno.test("a reopened store continues the chain where it stopped", async () => {
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path);
    fill(store, "cap_r", 3);
  }
  using store = new HarnessStore(dir.path);
  assertEquals(store.sink("cap_r").head.sequence, 6);
  fill(store, "cap_r", 1);
  const report = await store.verifyCapture("cap_r");
  assertEquals(report.ok, true);
  assertEquals(report.events, 8);
});

Deno.test("large payload values go to blobs, are hashed by reference and resolve on read", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { blobThreshold: 1000 });
  const ctx = fixedContext("cap_b");
  const big = "x".repeat(5000);
  const rows = Array.from({ length: 200 }, (_, i) => ({ id: `R-${i}` }));
  const sink = store.sink("cap_b");
  const stored = sink.emit(
    toolCallCompleted(ctx, {
      tool: { host_name: "read", logical_id: null },
      arguments: { path: "a" },
      result: { stdout: big, rows, small: 1 },
    }),
  );
  const result = stored.payload.result as Record<string, unknown>;
  assertOk(isBlobRef(result.stdout));
  assertOk(isBlobRef(result.rows));
  assertEquals(result.small, 1);
  // Same content again: the blob is shared, not duplicated.
  sink.emit(
    toolCallCompleted(ctx, {
      tool: { host_name: "read", logical_id: null },
      arguments: { path: "b" },
      result: { stdout: big },
    }),
  );
  const blobFiles = [...Deno.readDirSync(join(dir.path, "blobs/sha256"))];
  assertEquals(blobFiles.length, 2);
  const events = [];
  for await (const e of store.readEvents("cap_b")) events.push(e);
  assertEquals((events[0].payload.result as { stdout: string }).stdout, big);
  assertEquals((events[0].payload.result as { rows: unknown }).rows, rows);
  assertEquals((await store.verifyCapture("cap_b")).ok, true);
  // A blob altered on disk is refused when read.
  const ref = result.stdout as { $blob: string };
  Deno.writeTextFileSync(store.blobs.pathOf(ref.$blob), "y".repeat(5000));
  assertThrows(() => store.blobs.get(ref.$blob), BlobError);
});

Deno.test("deleting harness.db and rebuilding from the spools yields the same rows", async () => {
  await using dir = await tempDir();
  let before;
  {
    using store = new HarnessStore(dir.path);
    fill(store, "cap_x", 5);
    fill(store, "cap_y", 3);
    const ctx = fixedContext("cap_y", "_capture");
    store.sink("cap_y").emit(
      annotation(ctx, { type: "capture.started", label: "demo run" }),
    );
    before = store.index.dump();
    assertEquals(store.getCapture("cap_y")!.label, "demo run");
  }
  for (const f of ["harness.db", "harness.db-wal", "harness.db-shm"]) {
    await Deno.remove(join(dir.path, f)).catch(() => {});
  }
  using store = new HarnessStore(dir.path);
  assertEquals(store.index.dump(), before);
  // And an explicit rebuild over a live index gives the same rows too.
  assertEquals(store.rebuildIndex(), { captures: 2, events: 17 });
  assertEquals(store.index.dump(), before);
});

Deno.test("a second writer on the same root is refused with a clear error; readers are not", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, {
    role: "ingest-server",
    url: "http://127.0.0.1:8848",
  });
  fill(store, "cap_l", 1);
  store.flush();
  const err = assertThrows(() => new HarnessStore(dir.path), StoreLockedError);
  assertOk(/http:\/\/127\.0\.0\.1:8848/.test(err.message), err.message);
  assertOk(/only one writer/.test(err.message));
  using reader = new HarnessStore(dir.path, { readOnly: true });
  assertEquals(reader.getCapture("cap_l")!.event_count, 2);
  assertThrows(() => reader.sink("cap_l"), /read-only/);
});

Deno.test("the lock is released on close so the next writer can open", async () => {
  await using dir = await tempDir();
  new HarnessStore(dir.path).close();
  using again = new HarnessStore(dir.path);
  assertEquals(again.listCaptures(), []);
});

Deno.test("a torn last line is set aside and cut on open; complete lines stay byte for byte", async () => {
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path);
    fill(store, "cap_t", 2);
  }
  const path = join(dir.path, "captures/cap_t.jsonl");
  const intact = Deno.readFileSync(path);
  const f = Deno.openSync(path, { append: true });
  f.writeSync(new TextEncoder().encode('{"schema_version":"harness.tr'));
  f.close();
  using store = new HarnessStore(dir.path);
  assertEquals(store.findings.map((x) => x.kind), ["torn_tail_repaired"]);
  assertEquals(Deno.readFileSync(path), intact);
  assertOk(Deno.statSync(`${path}.torn-${intact.length}`).isFile);
  fill(store, "cap_t", 1);
  const r = await store.verifyCapture("cap_t");
  assertEquals([r.ok, r.events], [true, 6]);
});

Deno.test("a spool whose last complete line was altered is not appended to", async () => {
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path);
    fill(store, "cap_d", 1);
  }
  const path = join(dir.path, "captures/cap_d.jsonl");
  const text = Deno.readTextFileSync(path).replaceAll('"A-0"', '"A-9"');
  Deno.writeTextFileSync(path, text);
  using store = new HarnessStore(dir.path);
  assertEquals(store.findings.map((f) => f.kind), ["damaged_spool"]);
  assertThrows(() => store.sink("cap_d"), /capture verify/);
  assertEquals(Deno.readTextFileSync(path), text);
  const r = await store.verifyCapture("cap_d");
  assertEquals(r.problem?.sequence, 1);
});

Deno.test("an index of another schema version is dropped and rebuilt from the spools", async () => {
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path);
    fill(store, "cap_m", 2);
  }
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(join(dir.path, "harness.db"));
  db.exec(
    "UPDATE meta SET value = 'old' WHERE key = 'schema'; DELETE FROM event_index",
  );
  db.close();
  using store = new HarnessStore(dir.path);
  assertEquals(store.getCapture("cap_m")?.event_count, 4);
  assertEquals(store.index.events("cap_m").length, 4);
});
