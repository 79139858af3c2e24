/**
 * An exchange recorded after a pause (one agent's request, nothing else
 * waiting) is made durable at the end of its recording, in the same turn of
 * the event loop: its spool synced, its index rows flushed and their receipt
 * synced, without waiting for the index's timer.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { waitFor } from "../_wait.ts";
import { KEY, startGateway } from "./_gateway.ts";

/** Captures and sequences the heads log vouches for, a receipt a line. */
function receipts(root: string): { capture_id: string; sequence: number }[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(`${root}/heads.log`);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test("RecordQueue: an exchange after a pause is indexed and vouched for when it is recorded, not by the index's timer", async () => {
  // An hour's flush delay: only the quiet run's settle can write the
  // receipt within the test.
  await using rig = await startGateway({
    capture: "cap_quiet",
    store: { indexFlushMs: 3_600_000 },
  });
  rig.up.push({ text: "answer" });
  const res = await fetch(`${rig.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      ...rig.headers,
    },
    body: JSON.stringify({
      model: "gpt-up",
      messages: [{ role: "user", content: "one question" }],
    }),
  });
  assertEquals(res.status, 200);
  await res.arrayBuffer();
  const stats = rig.server.server.modelGateway!.stats;
  await waitFor("the exchange recorded", () => stats.recorded === 1);
  // Recorded and settled in the same run: the receipt is there once the run
  // ends (the index's own timer is an hour away).
  const mine = await waitFor("the quiet exchange's head receipt", () => {
    const got = receipts(rig.server.root).filter((r) =>
      r.capture_id === "cap_quiet"
    );
    return got.length > 0 ? got : null;
  });
  const events = rig.server.store.index.events("cap_quiet");
  assertEquals(mine.at(-1)!.sequence, events.length);
  assertOk(events.some((e) => e.kind === "model.responded"));
});
