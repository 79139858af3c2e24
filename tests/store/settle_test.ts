/**
 * `HarnessStore.hold()` / `settle()`: a writer that will settle soon makes
 * appends arm no timers (a cancelled timer still wakes the process when it
 * was due), and `settle()` makes what was written indexed and durable in the
 * same turn of the event loop.
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { message } from "../../lib/trace/mod.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

/**
 * The sequences the heads log vouches for (one receipt per line): a receipt
 * is written when the index is flushed by its timer or a settle (a read of
 * the index flushes its rows too, but writes no receipt).
 */
function receipts(root: string): number[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(`${root}/heads.log`);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return text.split("\n").filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { sequence: number }).sequence);
}

Deno.test("HarnessStore.hold(): held appends are not indexed by a timer; settle() indexes them and writes their receipt at once", async () => {
  await using dir = await tempDir();
  await using other = await tempDir();
  using store = new HarnessStore(dir.path, { indexFlushMs: 10 });
  // The same flush delay, not held, its append made later: once its timer
  // has flushed, a timer the held store armed first would have too.
  using unheld = new HarnessStore(other.path, { indexFlushMs: 10 });
  const ctx = fixedContext("cap_quiet", "ep_1");
  store.hold();
  store.sink("cap_quiet").emit(message(ctx, { role: "user", text: "one" }));
  store.sink("cap_quiet").emit(message(ctx, { role: "user", text: "two" }));
  unheld.sink("cap_quiet").emit(message(ctx, { role: "user", text: "one" }));
  await waitFor(
    "the unheld store's timer flush",
    () => receipts(other.path).length === 1,
  );
  assertEquals(receipts(dir.path), []);
  store.settle();
  assertEquals(receipts(dir.path), [2]);
  assertEquals(store.index.events("cap_quiet").length, 2);
  // Settled, the hold is over: a later append is flushed by its timer.
  store.sink("cap_quiet").emit(message(ctx, { role: "user", text: "three" }));
  await waitFor(
    "the timer's flush after the hold",
    () => receipts(dir.path).length === 2,
  );
  assertEquals(receipts(dir.path), [2, 3]);
  assertEquals(store.index.events("cap_quiet").length, 3);
});

Deno.test("HarnessStore.settle(): rows waiting for a long flush timer are indexed now", async () => {
  await using dir = await tempDir();
  // An hour's flush delay: only settle() can index the event within the
  // test. (That the timer is cleared is not seen here: closing the store
  // clears it too.)
  using store = new HarnessStore(dir.path, { indexFlushMs: 3_600_000 });
  const ctx = fixedContext("cap_wait", "ep_1");
  store.sink("cap_wait").emit(message(ctx, { role: "user", text: "one" }));
  assertEquals(receipts(dir.path), []);
  store.settle();
  assertEquals(receipts(dir.path), [1]);
  assertEquals(store.index.events("cap_wait").length, 1);
  // Nothing new: settling again writes no receipt.
  store.settle();
  assertEquals(receipts(dir.path), [1]);
});
