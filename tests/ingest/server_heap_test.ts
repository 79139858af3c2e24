import { assertEquals, assertOk } from "../_assert.ts";
import { SERVER_V8_FLAGS } from "../../lib/ingest/server_heap.ts";

const CONFIG = new URL("../../deno.json", import.meta.url);

Deno.test("SERVER_V8_FLAGS: deno task serve and deno task daemon run the server with them", async () => {
  const tasks: Record<string, string> =
    JSON.parse(await Deno.readTextFile(CONFIG)).tasks;
  for (const name of ["serve", "daemon"]) {
    assertOk(tasks[name].includes(" ingest.ts serve"), tasks[name]);
    const flags = tasks[name].split(" ingest.ts ")[0].split(" ");
    assertEquals(flags.includes(SERVER_V8_FLAGS), true, tasks[name]);
  }
  assertEquals(
    SERVER_V8_FLAGS,
    "--v8-flags=--initial-old-space-size=64",
  );
});
