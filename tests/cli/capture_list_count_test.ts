/**
 * `capture list` counts episodes, not the capture's own record (`_capture`:
 * its start and finish): after the demo its capture shows 200 episodes (it
 * showed 201) and the run's capture 1 (it showed 2); issue 48, item 6.
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("capture list after the demo: 200 episodes in its capture, 1 in the run's", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/store`;
  const demo = await runMain(["demo", "--root", root, "--json"]);
  assertEquals(demo.code, 0, demo.err);
  const list = await runMain(["capture", "list", "--json", "--root", root]);
  const counts = JSON.parse(list.out).map((
    c: { capture_id: string; episode_count: number },
  ) => [c.capture_id.endsWith("_run") ? "run" : "demo", c.episode_count]);
  assertEquals(counts, [["demo", 200], ["run", 1]]);
  // A rebuilt index counts the same.
  assertEquals(
    (await runMain(["store", "rebuild-index", "--root", root])).code,
    0,
  );
  const again = await runMain(["capture", "list", "--json", "--root", root]);
  assertEquals(
    JSON.parse(again.out).map((c: { episode_count: number }) =>
      c.episode_count
    ),
    [200, 1],
  );
});
