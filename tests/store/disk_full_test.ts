import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";

const CHILD = new URL("./_disk_full_child.ts", import.meta.url).pathname;
const REPO = new URL("../..", import.meta.url).pathname;

/** Why the kernel refuses a user+mount namespace here, or null when it allows one. */
async function namespaceRefusal(): Promise<string | null> {
  try {
    const out = await new Deno.Command("unshare", {
      args: ["-Urm", "true"],
      stdout: "null",
      stderr: "piped",
    }).output();
    return out.success ? null : new TextDecoder().decode(out.stderr).trim();
  } catch (err) {
    return (err as Error).message;
  }
}

Deno.test("HarnessStore on a full disk: the real cause on every route, no temporary files, /health false until writes succeed, nothing acknowledged lost", async () => {
  const refusal = await namespaceRefusal();
  if (refusal !== null) {
    console.log(
      `skipped: the kernel refuses a user+mount namespace for a small tmpfs (unshare -Urm: ${refusal})`,
    );
    return;
  }
  await using dir = await tempDir();
  // A 1.5 MiB tmpfs over the temp dir, seen by the child only.
  const out = await new Deno.Command("unshare", {
    args: [
      "-Urm",
      "sh",
      "-c",
      'mount -t tmpfs -o size=1536k tmpfs "$1" && exec "$2" run --allow-read --allow-write="$1" --allow-net=127.0.0.1 "$3" "$1"',
      "sh",
      dir.path,
      Deno.execPath(),
      CHILD,
    ],
    cwd: REPO,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assertOk(out.success, `the child failed: ${stderr}`);
  const r = JSON.parse(new TextDecoder().decode(out.stdout));

  // Writes on the full disk: refused with the cause, never acknowledged.
  assertOk(r.acked > 0 && r.refused > 0, JSON.stringify(r));
  assertEquals(r.write_status, 507); // Insufficient Storage
  assertMatch(r.write_error, /disk is full/);
  assertEquals(r.temporaries_while_full, 0);
  // A streamed import on the full disk keeps nothing.
  assertMatch(r.import_full, /disk is full/);
  assertEquals(r.import_spool_left, false);
  // /health says so, with the reason.
  assertEquals(r.health_full.ok, false);
  assertEquals(r.health_full.store.ok, false);
  assertMatch(r.health_full.store.error, /disk is full/);
  // The read routes name the full disk, not SQLite's rollback.
  for (const read of [r.captures_full, r.summary_full]) {
    assertEquals(read.status, 507);
    assertMatch(read.body.error, /disk is full/);
    assertOk(!/rollback/i.test(read.body.error), read.body.error);
  }
  assertOk(
    r.health_after_reads.store.failing.some((f: { part: string }) =>
      f.part === "index"
    ),
    JSON.stringify(r.health_after_reads.store),
  );
  // Space freed: the next write is acknowledged, the reads answer, /health recovers.
  assertEquals(r.after_free_status, 200);
  assertEquals(r.health_freed.ok, true);
  assertEquals(r.health_freed.store.failing, []);
  assertEquals(r.captures_freed.status, 200);
  assertEquals(r.captures_freed.body[0].event_count, r.acked_total);
  // Every acknowledged event is in the chain, which holds.
  assertEquals(r.chain_ok, true);
  assertEquals(r.chain_events, r.acked_total);
  // A temporary blob file a killed writer left is swept on open.
  assertEquals(r.temporaries_after_reopen, 0);
  assertOk(r.reopen_findings.includes("blob_temporaries_removed"));
  assertEquals(r.reopen_events, r.acked_total);
});
