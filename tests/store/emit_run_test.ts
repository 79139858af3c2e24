import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
  assertThrows,
} from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { message, type UnsealedEvent } from "../../lib/trace/mod.ts";
import { fixedContext, tempDir } from "../_helpers.ts";

function batch(captureId: string, from: number, n: number): UnsealedEvent[] {
  const ctx = fixedContext(captureId, `ep_${from}`);
  return Array.from(
    { length: n },
    (_, i) => message(ctx, { role: "user", text: `m${from + i}` }),
  );
}

Deno.test("JsonlTraceSink.emitRun() appends batches as one run, indexed, chained and anchored", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const sink = store.sink("cap_run");
  sink.emit(batch("cap_run", 0, 1)[0]);
  const r = await sink.emitRun([
    batch("cap_run", 1, 3),
    [],
    batch("cap_run", 4, 2),
  ]);
  assertEquals(r.events, 5);
  assertEquals(r.last?.sequence, 6);
  assertEquals(store.getCapture("cap_run")?.event_count, 6);
  assertEquals(store.listEpisodes("cap_run").length, 3);
  const v = await store.verifyCapture("cap_run");
  assertEquals(v.ok, true);
  assertEquals(v.anchor?.sequence, 6);
  assertEquals(sink.emit(batch("cap_run", 9, 1)[0]).sequence, 7);
});

Deno.test("JsonlTraceSink.emitRun() that fails after a written batch keeps none of the run", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const sink = store.sink("cap_run");
  sink.emit(batch("cap_run", 0, 1)[0]);
  store.flush();
  const size = Deno.statSync(store.spoolPath("cap_run")).size;
  async function* failing(): AsyncGenerator<UnsealedEvent[]> {
    yield batch("cap_run", 1, 50);
    yield [{ ...batch("cap_run", 51, 1)[0], payload: { n: Infinity } }];
  }
  await assertRejects(() => sink.emitRun(failing()), TypeError);
  assertEquals(Deno.statSync(store.spoolPath("cap_run")).size, size);
  assertEquals(sink.head.sequence, 1);
  assertEquals(store.getCapture("cap_run")?.event_count, 1);
  // A source that throws after a batch: the same.
  async function* broken(): AsyncGenerator<UnsealedEvent[]> {
    yield batch("cap_run", 1, 5);
    throw new Error("the file changed");
  }
  await assertRejects(() => sink.emitRun(broken()), /the file changed/);
  assertEquals(Deno.statSync(store.spoolPath("cap_run")).size, size);
  assertEquals(sink.emit(batch("cap_run", 60, 1)[0]).sequence, 2);
  assertEquals((await store.verifyCapture("cap_run")).ok, true);
});

Deno.test("JsonlTraceSink.emitRun() that fails on a new capture leaves no spool, and refuses other emits while it runs", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const sink = store.sink("cap_new");
  let emitted: unknown = null;
  async function* source(): AsyncGenerator<UnsealedEvent[]> {
    yield batch("cap_new", 0, 2);
    emitted = assertThrows(() => sink.emit(batch("cap_new", 9, 1)[0]));
    throw new Error("stop");
  }
  await assertRejects(() => sink.emitRun(source()), /stop/);
  assertMatch(String(emitted), /while a run of events/);
  assertEquals(store.captureIds(), []);
  assertOk(sink.closed);
});
