import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { fixedContext, messageEventJson, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { createIngestHandler } from "../../lib/ingest/mod.ts";

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

Deno.test("ingest refuses bodies that are not UTF-8 with 400 instead of storing U+FFFD", async () => {
  await using srv = await startServer();
  const ev = JSON.stringify(
    annotation(fixedContext("u"), { type: "note", t: "ab" }),
  );
  const bytes = new TextEncoder().encode(ev);
  const i = ev.indexOf('"ab"') + 1;
  bytes[i] = 0xc3; // a lead byte with no continuation
  const res = await fetch(`${srv.url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: bytes,
  });
  const body = await res.json();
  assertEquals(res.status, 400);
  assertOk(/UTF-8/.test(body.error), body.error);
  assertEquals(srv.store.hasCapture("u"), false);
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

Deno.test("non-finite numbers and deep nesting are refused as bad input (422/400), never 500, and nothing is stored", async () => {
  await using srv = await startServer();
  const base = annotation(fixedContext("shape"), { type: "note" });
  const text = JSON.stringify(base);
  const send = async (body: string, path = "/ingest") => {
    const res = await fetch(`${srv.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return { status: res.status, body: await res.json() };
  };
  const inf = await send(
    text.replace('"type":"note"', '"type":"note","x":1e400'),
  );
  assertEquals(inf.status, 422, JSON.stringify(inf.body));
  assertOk(/not finite/.test(inf.body.error));
  let deep = '"v"';
  for (let i = 0; i < 100; i++) deep = `{"a":${deep}}`;
  const d100 = await send(
    text.replace('"type":"note"', `"type":"note","x":${deep}`),
  );
  assertEquals(d100.status, 422);
  assertOk(/deeper than 64/.test(d100.body.error), d100.body.error);
  const huge = "[".repeat(20_000) + "]".repeat(20_000);
  const dh = await send(huge);
  assertOk(dh.status === 400 || dh.status === 422, String(dh.status));
  const hook = await send(
    JSON.stringify({
      session_id: "s",
      hook_event_name: "UserPromptSubmit",
      prompt: JSON.parse(deep),
    }),
    "/hook/host_a?cap=shape",
  );
  assertEquals([hook.status, hook.body.ok], [200, false]);
  assertEquals(srv.store.hasCapture("shape"), false);
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

Deno.test("many captures cannot exhaust file handles: the least recently used spools close and reopen on use, chains intact", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { maxOpenSpools: 8 });
  const sinks = Array.from({ length: 40 }, (_, i) => store.sink(`cap_${i}`));
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 40; i++) {
      sinks[i].emit(
        annotation(fixedContext(`cap_${i}`), { type: "note", round }),
      );
      assertOk(store.openSpools <= 8, String(store.openSpools));
    }
  }
  for (let i = 0; i < 40; i++) {
    const r = await store.verifyCapture(`cap_${i}`);
    assertEquals([r.ok, r.events], [true, 3]);
  }
});

Deno.test("the server takes events for more captures than it may hold files open (1,100 capture ids)", async () => {
  await using srv = await startServer();
  for (let i = 0; i < 1100; i++) {
    const res = await fetch(`${srv.url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(
        annotation(fixedContext(`many_${i}`), { type: "note" }),
      ),
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
  assertOk(srv.store.openSpools <= 128);
  assertEquals((await srv.store.verifyCapture("many_0")).ok, true);
  assertEquals((await srv.store.verifyCapture("many_1099")).ok, true);
});

Deno.test("past its connection cap, with every connection in the middle of a request, the server answers 503 with Retry-After instead of piling up work", async () => {
  await using srv = await startServer({ maxConnections: 2 });
  // Two requests whose bodies never finish hold both connections.
  const held: Deno.Conn[] = [];
  const port = Number(new URL(srv.url).port);
  for (let i = 0; i < 2; i++) {
    const c = await Deno.connect({ hostname: "127.0.0.1", port });
    await c.write(new TextEncoder().encode(
      `POST /ingest HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`,
    ));
    held.push(c);
  }
  await new Promise((r) => setTimeout(r, 100));
  const res = await fetch(`${srv.url}/health`);
  assertEquals(res.status, 503);
  assertEquals(res.headers.get("retry-after"), "1");
  await res.body?.cancel();
  for (const c of held) c.close();
  await new Promise((r) => setTimeout(r, 100));
  const after = await fetch(`${srv.url}/health`);
  assertEquals(after.status, 200);
  await after.body?.cancel();
});

Deno.test("past its in-flight limit the handler (fetch API) answers 503 with Retry-After; slots free again when requests end", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const { handler } = createIngestHandler(store, { maxInFlight: 2 });
  // Two requests whose bodies are still arriving hold both slots.
  const ends: (() => void)[] = [];
  const pending = [0, 1].map((i) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          new TextEncoder().encode(
            messageEventJson(`evt_inflight_${i}`, "inflight"),
          ),
        );
        ends.push(() => controller.close());
      },
    });
    return handler(
      new Request("http://127.0.0.1:1/ingest", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
  });
  await new Promise((r) => setTimeout(r, 50));
  const busy = await handler(new Request("http://127.0.0.1:1/health"));
  assertEquals(busy.status, 503);
  assertEquals(busy.headers.get("retry-after"), "1");
  await busy.body?.cancel();
  for (const end of ends) end();
  for (const res of await Promise.all(pending)) {
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
  const after = await handler(new Request("http://127.0.0.1:1/health"));
  assertEquals(after.status, 200);
  await after.body?.cancel();
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
  await new Promise((r) => setTimeout(r, 300));
  assertOk(store.indexFlushError !== null, "the failure is kept");
  Deno.removeSync(`${dir.path}/heads.log`);
  await new Promise((r) => setTimeout(r, 1500));
  assertEquals(store.indexFlushError, null);
  assertOk(
    Deno.readTextFileSync(`${dir.path}/heads.log`).includes('"sequence":2'),
  );
  assertEquals(store.getCapture("c")?.event_count, 2);
});
