import { assertEquals } from "../_assert.ts";
import { UpstreamDeadline } from "../../lib/model_gateway/upstream_deadline.ts";

function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(signal.reason), {
      once: true,
    })
  );
}

Deno.test("UpstreamDeadline aborts with a TimeoutError when its time is up, and never once ended", async () => {
  const ended = new UpstreamDeadline(20);
  ended.end();
  ended.end(); // twice is harmless
  const running = new UpstreamDeadline(20);
  const reason = await aborted(running.signal);
  // Started later with the same time: the ended one had its turn first.
  assertEquals(ended.signal.aborted, false);
  assertEquals(running.signal.aborted, true);
  assertEquals((reason as DOMException).name, "TimeoutError");
  running.end(); // after the time is up: nothing left to clear
});

Deno.test("UpstreamDeadline aborts with the client's reason while the exchange runs, and lets go of the client once it ends", () => {
  const client = new AbortController();
  const running = new UpstreamDeadline(60_000, client.signal);
  const ended = new UpstreamDeadline(60_000, client.signal);
  ended.end();
  client.abort(new Error("the client went away"));
  assertEquals(running.signal.aborted, true);
  assertEquals(
    (running.signal.reason as Error).message,
    "the client went away",
  );
  assertEquals(ended.signal.aborted, false);
  running.end();
  const gone = new UpstreamDeadline(60_000, client.signal);
  assertEquals(gone.signal.aborted, true); // the client was gone already
  gone.end();
});
