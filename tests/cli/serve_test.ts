import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

async function cli(root: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      `--allow-read=${root}`,
      `--allow-write=${root}`,
      "--allow-net=127.0.0.1",
      "--allow-run",
      "--allow-env=HARNESS_ROOT,HARNESS_INGEST_TOKEN",
      INGEST,
      ...args,
      "--root",
      root,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    out: new TextDecoder().decode(out.stdout),
    err: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("serve --detach runs in the background; status sees it; a second server on the root is refused; stop stops it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const up = await cli(root, "serve", "--detach", "--port", "0");
  assertEquals(up.code, 0, up.err);
  const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(up.out)![1];
  try {
    const st = await cli(root, "status", "--json");
    assertEquals(st.code, 0, st.err);
    assertEquals(JSON.parse(st.out).url, url);
    const again = await cli(root, "serve", "--port", "0");
    assertEquals(again.code, 1);
    assertOk(
      /locked by process \d+ \(ingest-server at http/.test(again.err),
      again.err,
    );
    const res = await fetch(`${url}/hook/host_b?cap=bg`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        session_id: "s",
        hook_event_name: "BeforeAgent",
        prompt: "hi",
      }),
    });
    assertEquals((await res.json()).ok, true);
    // Read commands work beside the running writer.
    const list = await cli(root, "capture", "list", "--json");
    assertEquals(
      JSON.parse(list.out).map((c: { capture_id: string }) => c.capture_id),
      ["bg"],
    );
  } finally {
    const down = await cli(root, "stop");
    assertEquals(down.code, 0, down.err);
  }
  const st = await cli(root, "status");
  assertEquals(st.code, 1);
  assertOk(/not running/.test(st.out), st.out);
  // The store was closed cleanly and verifies.
  const v = await cli(root, "capture", "verify", "bg");
  assertEquals(v.code, 0, v.out + v.err);
});
