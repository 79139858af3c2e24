/**
 * `proxy.ts --json`: what the proxy says on stderr (stdout is the MCP
 * protocol's) as one JSON object per line.
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";

const PROXY = new URL("../../proxy.ts", import.meta.url).pathname;

Deno.test({
  name:
    "proxy.ts --json reports recording and finished as JSON lines on stderr, and nothing on stdout",
  async fn() {
    await using dir = await tempDir();
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "-A",
        PROXY,
        "--json",
        "--capture",
        "px",
        "--root",
        `${dir.path}/store`,
        "--",
        "sleep",
        "30",
      ],
      stdin: "null", // the host closes at once: the proxy stops its upstream
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    assertEquals(r.code, 0, dec.decode(r.stderr));
    assertEquals(dec.decode(r.stdout), "");
    const lines = dec.decode(r.stderr).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assertEquals(lines.map((l) => [l.status, l.capture_id]), [
      ["recording", "px"],
      ["finished", "px"],
    ]);
    assertEquals([lines[1].calls, lines[1].dropped_events], [0, 0]);
  },
});
