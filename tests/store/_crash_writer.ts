/**
 * Child process of the crash test: appends events to a capture forever and
 * prints each acknowledged sequence on stdout, until it is killed.
 *
 * @module
 */
import { HarnessStore } from "../../lib/store/mod.ts";
import { toolCallCompleted } from "../../lib/trace/mod.ts";

const [root, captureId, seed] = Deno.args;
const store = new HarnessStore(root, { blobThreshold: 2048 });
const sink = store.sink(captureId);
const enc = new TextEncoder();
let n = Number(seed);
const ctx = {
  captureId,
  episodeId: `ep_${seed}`,
  source: { host: "harness", adapter: "crash-test", model: null },
};
for (;;) {
  n++;
  // Mix small events with big ones (blob path) and long inline lines.
  const size = n % 7 === 0 ? 6000 : n % 3 === 0 ? 1500 : 20;
  const ev = sink.emit(
    toolCallCompleted(ctx, {
      tool: { host_name: "write", logical_id: null },
      arguments: { n },
      result: { text: String(n % 10).repeat(size) },
    }),
  );
  Deno.stdout.writeSync(enc.encode(`${ev.sequence}\n`));
}
