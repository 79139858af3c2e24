/**
 * A gateway in a process of its own for tests that stop it hard (`kill
 * -9`) or read its memory: `deno run … _gateway_child.ts ROOT OPTIONS_JSON`
 * starts an ingest server over the store at ROOT with the model gateway's
 * options, prints `gateway <url>`, and runs until stdin closes (or it is
 * killed).
 *
 * @module
 */
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";

const [root, options] = Deno.args;
const store = new HarnessStore(root, { role: "ingest-server" });
const server = new IngestServer(store, {
  port: 0,
  modelGateway: JSON.parse(options),
});
console.log(`gateway ${await server.start()}`);
for await (const _ of Deno.stdin.readable) {
  // Nothing comes; the test closes stdin to stop the process.
}
await server.close();
store.close();
