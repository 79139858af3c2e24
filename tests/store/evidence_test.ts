import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

function fill(store: HarnessStore, id: string, n: number) {
  const sink = store.sink(id);
  const ctx = fixedContext(id);
  for (let i = 0; i < n; i++) sink.emit(annotation(ctx, { type: "note", i }));
}

Deno.test("verify refuses a line whose bytes after event_hash were changed, and a line that is not valid UTF-8", async () => {
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path);
    fill(store, "c", 3);
  }
  using store = new HarnessStore(dir.path, { readOnly: true });
  const path = store.spoolPath("c");
  const original = Deno.readFileSync(path);
  const text = new TextDecoder().decode(original);
  // The comma after the event_hash member.
  const at = text.indexOf('","event_id"', text.indexOf("\n") + 1) + 1;
  Deno.writeTextFileSync(path, text.slice(0, at) + "X" + text.slice(at + 1));
  let r = await store.verifyCapture("c");
  assertEquals([r.ok, r.problem?.sequence], [false, 2]);
  // An invalid UTF-8 byte in place of a character.
  const bytes = original.slice();
  const second = text.indexOf("\n") + 1;
  bytes[second + text.slice(second).indexOf('"note"') + 2] = 0xff;
  Deno.writeFileSync(path, bytes);
  r = await store.verifyCapture("c");
  assertEquals([r.ok, r.problem?.sequence, r.problem?.kind], [
    false,
    2,
    "syntax",
  ]);
});

Deno.test("capture verify never changes anything (a torn tail is reported, not moved), and rebuild-index says what it repaired", async () => {
  const { main } = await import("../../ingest.ts");
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path);
    fill(store, "c", 3);
  }
  const path = `${dir.path}/captures/c.jsonl`;
  const torn = new TextDecoder().decode(Deno.readFileSync(path)) + '{"half';
  Deno.writeTextFileSync(path, torn);
  let out = "", err = "";
  const io = {
    out: (t: string) => out += t + "\n",
    err: (t: string) => err += t + "\n",
  };
  const code = await main(["capture", "verify", "c", "--root", dir.path], io);
  assertEquals(code, 1, out + err);
  assertOk(/no newline|torn|cut off/i.test(out), out);
  assertEquals(Deno.readTextFileSync(path), torn);
  out = "";
  assertEquals(
    await main(["store", "rebuild-index", "--root", dir.path], io),
    0,
  );
  assertOk(/repaired:/.test(out), out);
  out = "";
  assertEquals(
    await main(["capture", "verify", "c", "--root", dir.path], io),
    0,
  );
});

Deno.test("a damaged harness.db blocks nothing: readers use an index rebuilt in memory, the writer moves it aside and rebuilds, both say so", async () => {
  const { main } = await import("../../ingest.ts");
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path);
    fill(store, "c", 5);
  }
  const db = `${dir.path}/harness.db`;
  for (const s of ["-wal", "-shm"]) {
    try {
      Deno.removeSync(db + s);
    } catch { /* absent */ }
  }
  Deno.writeTextFileSync(db, "this is not a database".repeat(500));
  let out = "", err = "";
  const io = {
    out: (t: string) => out += t + "\n",
    err: (t: string) => err += t + "\n",
  };
  assertEquals(
    await main(["capture", "verify", "c", "--root", dir.path], io),
    0,
    err,
  );
  assertEquals(
    await main(["capture", "list", "--root", dir.path, "--json"], io),
    0,
    err,
  );
  assertOk(out.includes('"c"'), out);
  assertOk(/damaged/.test(err), err);
  assertOk(
    Deno.readTextFileSync(db).startsWith("this is not"),
    "a reader changes nothing",
  );
  out = "";
  assertEquals(
    await main(["store", "rebuild-index", "--root", dir.path], io),
    0,
  );
  assertOk(/moved it aside/.test(out), out);
  using store = new HarnessStore(dir.path, { readOnly: true });
  assertEquals(store.getCapture("c")?.event_count, 5);
  assertOk(
    [...Deno.readDirSync(dir.path)].some((e) =>
      e.name.startsWith("harness.db.damaged-")
    ),
  );
});

Deno.test("head receipts: a clean truncation or a rewrite re-hashed to the end fails verify, and so does a head someone kept", async () => {
  const { main } = await import("../../ingest.ts");
  const { HashChainer } = await import("../../lib/trace/chain.ts");
  await using dir = await tempDir();
  let kept = "";
  {
    using store = new HarnessStore(dir.path);
    fill(store, "c", 5);
    store.flush();
    const head = store.sink("c").head;
    kept = `${head.sequence}:${head.hash}`;
  }
  assertOk(
    Deno.readTextFileSync(`${dir.path}/heads.log`).includes('"sequence":5'),
  );
  const path = `${dir.path}/captures/c.jsonl`;
  const lines = Deno.readTextFileSync(path).split("\n").filter(Boolean);
  // Two acknowledged events gone, cleanly at a line boundary.
  Deno.writeTextFileSync(path, lines.slice(0, 3).join("\n") + "\n");
  let out = "";
  const io = { out: (t: string) => out += t + "\n", err: () => {} };
  assertEquals(
    await main(["capture", "verify", "c", "--root", dir.path], io),
    1,
  );
  assertOk(/truncated.*recorded sequence 5/.test(out), out);
  // The same five events, the last one edited and re-hashed to the end.
  const events = lines.map((l) => JSON.parse(l));
  const chain = new HashChainer();
  const resealed = events.map((e, i) => {
    const { sequence: _s, prev_event_hash: _p, event_hash: _h, ...u } = e;
    if (i === 4) u.payload = { ...u.payload, i: 999 };
    return chain.seal(u).line;
  });
  Deno.writeTextFileSync(path, resealed.join("\n") + "\n");
  out = "";
  assertEquals(
    await main(["capture", "verify", "c", "--root", dir.path], io),
    1,
  );
  assertOk(/rewritten/.test(out), out);
  // With a receipt someone kept (and no heads log at all).
  Deno.removeSync(`${dir.path}/heads.log`);
  out = "";
  assertEquals(
    await main([
      "capture",
      "verify",
      "c",
      "--root",
      dir.path,
      "--expect-head",
      kept,
    ], io),
    1,
  );
  assertOk(/expected recorded/.test(out), out);
});

Deno.test("store files are private, ids stay portable, a deleted lock file lets no second writer in, and packages keep their captures across a rebuild", async () => {
  const { StoreLockedError } = await import("../../lib/store/mod.ts");
  const { InvalidIdError, validateId } = await import("../../lib/trace/ids.ts");
  const { CaptureCoordinator } = await import("../../lib/control/mod.ts");
  const { generateDeskEpisodes, DESK_EFFECTS } = await import(
    "../../examples/order_desk/order_desk.ts"
  );
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  fill(store, "Run_1", 1);
  store.blobs.put("x".repeat(100));
  const mode = (p: string) => Deno.statSync(p).mode! & 0o777;
  assertEquals(mode(`${dir.path}/captures/Run_1.jsonl`), 0o600);
  assertEquals(mode(`${dir.path}/captures`), 0o700);
  for (const e of Deno.readDirSync(`${dir.path}/blobs/sha256`)) {
    if (e.isFile) {
      assertEquals(mode(`${dir.path}/blobs/sha256/${e.name}`), 0o600);
    }
  }
  // Portable ids.
  for (const bad of ["CON", "nul.txt", "com1", "LPT9.log"]) {
    let err: unknown = null;
    try {
      validateId("capture", bad);
    } catch (e) {
      err = e;
    }
    assertOk(err instanceof InvalidIdError, bad);
  }
  let clash: unknown = null;
  try {
    store.sink("run_1");
  } catch (e) {
    clash = e;
  }
  assertOk(
    clash instanceof InvalidIdError && /only by case/.test(clash.message),
  );
  // Someone removes harness.lock while the writer runs.
  Deno.removeSync(`${dir.path}/harness.lock`);
  let second: unknown = null;
  try {
    new HarnessStore(dir.path).close();
  } catch (e) {
    second = e;
  }
  assertOk(second instanceof StoreLockedError, String(second));
  // A compiled package keeps the captures it came from across a rebuild.
  generateDeskEpisodes(store.sink("desk"), "desk", 12);
  const coord = new CaptureCoordinator(store);
  const compiled = await coord.compile(["desk"], {
    name: "desk",
    effects: DESK_EFFECTS,
  });
  const before = store.index.query("SELECT capture_ids FROM packages");
  store.index.query("DELETE FROM packages");
  store.rebuildIndex();
  const after = store.index.query("SELECT capture_ids FROM packages");
  assertEquals(after, before);
  assertOk(String(after[0]?.capture_ids).includes("desk"), compiled.file);
});

Deno.test("a background index flush that fails (here: heads.log cannot be opened) never ends the process: it is reported and tried again until it works", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  // In the way of the first receipt: a folder where heads.log goes.
  Deno.mkdirSync(`${dir.path}/heads.log`);
  fill(store, "c", 2);
  await waitFor("the failure kept", () => store.indexFlushError !== null);
  Deno.removeSync(`${dir.path}/heads.log`);
  await waitFor(
    "the flush to work again",
    () => store.indexFlushError === null,
  );
  assertOk(
    Deno.readTextFileSync(`${dir.path}/heads.log`).includes('"sequence":2'),
  );
  assertEquals(store.getCapture("c")?.event_count, 2);
});
