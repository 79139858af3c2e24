import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { message } from "../../lib/trace/mod.ts";
import { fixedContext, tempDir } from "../_helpers.ts";

Deno.test("HarnessStore.sink(): a new capture whose first write is refused leaves no spool behind", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const ctx = fixedContext("cap_new", "ep_1");
  const good = message(ctx, { role: "user", text: "hello" });
  // emitMany: an episode id the store refuses.
  assertThrows(() =>
    store.sink("cap_new").emitMany([good, { ...good, episode_id: "bad id" }])
  );
  assertEquals(store.hasCapture("cap_new"), false);
  assertEquals(store.captureIds(), []);
  // emit: a value JSON cannot hold.
  assertThrows(() =>
    store.sink("cap_new").emit({ ...good, payload: { n: Infinity } })
  );
  assertEquals(store.captureIds(), []);
  // The capture can still be written afterwards, by a fresh sink.
  assertEquals(store.sink("cap_new").emit(good).sequence, 1);
  assertEquals(store.captureIds(), ["cap_new"]);
});

Deno.test("HarnessStore.sink(): a refused write to a capture that has events keeps its spool and sink", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const ctx = fixedContext("cap_old", "ep_1");
  const sink = store.sink("cap_old");
  sink.emit(message(ctx, { role: "user", text: "one" }));
  assertThrows(() =>
    sink.emit({
      ...message(ctx, { role: "user", text: "x" }),
      payload: { n: NaN },
    })
  );
  assertOk(!sink.closed);
  assertEquals(
    sink.emit(message(ctx, { role: "user", text: "two" })).sequence,
    2,
  );
  assertEquals(store.captureIds(), ["cap_old"]);
});
