import { assertEquals } from "../_assert.ts";
import { join } from "node:path";
import { main } from "../../ingest.ts";
import { serve } from "../../lib/cli/cmd_serve.ts";
import { tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

const quiet = { out: () => {}, err: () => {} };

function mode(path: string): number {
  return Deno.statSync(path).mode! & 0o777;
}

Deno.test({
  name:
    "capture start and serve create the store root owner-only (0700), as the demo does",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using dir = await tempDir();
    const started = join(dir.path, "started", "store");
    assertEquals(
      await main(["capture", "start", "--id", "c", "--root", started], quiet),
      0,
    );
    assertEquals(mode(started), 0o700);

    const served = join(dir.path, "served");
    let first = "";
    let stop!: () => void;
    const stopSignal = new Promise<void>((r) => stop = r);
    const done = serve({
      root: served,
      host: "127.0.0.1",
      port: 0,
      allowRemote: false,
      noRedact: false,
      stopSignal,
    }, { out: (t) => first ||= t, err: () => {} });
    await waitFor("the server's start line", () => first);
    stop();
    assertEquals(await done, 0);
    assertEquals(mode(served), 0o700);
  },
});
