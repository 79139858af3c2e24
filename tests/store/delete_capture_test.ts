/**
 * Deleting captures and retention: the spool, index rows, head receipts
 * and unshared blobs go; what other captures use stays and still verifies;
 * the active capture needs --force; a running server must be stopped first.
 *
 * @module
 */
import { join } from "node:path";
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { annotation, HarnessStore } from "../../mod.ts";
import { writeActiveCapture } from "../../lib/store/active_capture.ts";
import { pruneCaptures } from "../../lib/store/prune_captures.ts";

/** x: a value of its own and a shared one (both blobs); y: the shared one; z: small. */
function threeCaptures(root: string): void {
  using store = new HarnessStore(root);
  const shared = "s".repeat(40_000);
  const own = "o".repeat(40_000);
  store.sink("x").emit(
    annotation(fixedContext("x"), { type: "note", a: shared, b: own }),
  );
  store.sink("y").emit(
    annotation(fixedContext("y"), { type: "note", a: shared, b: "small" }),
  );
  store.sink("z").emit(annotation(fixedContext("z"), { type: "note" }));
}

function blobCount(root: string): number {
  return [...Deno.readDirSync(join(root, "blobs", "sha256"))].length;
}

Deno.test("capture delete removes a capture's spool, index rows, receipts and the blobs only it used; the others still verify", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  threeCaptures(root);
  assertEquals(blobCount(root), 2);
  const r = await runMain(["capture", "delete", "x", "--root", root, "--json"]);
  assertEquals(r.code, 0, r.err);
  const [d] = JSON.parse(r.out).deleted;
  assertEquals([d.capture_id, d.blobs], ["x", 1]);
  assertOk(d.index_rows >= 3 && d.spool_bytes > 0, r.out);
  assertEquals(blobCount(root), 1);
  assertEquals(
    Deno.readTextFileSync(join(root, "heads.log")).includes('"x"'),
    false,
  );
  const list = await runMain(["capture", "list", "--root", root, "--json"]);
  assertEquals(
    JSON.parse(list.out).map((c: { capture_id: string }) => c.capture_id),
    ["y", "z"],
  );
  const verify = await runMain(["capture", "verify", "y", "--root", root]);
  assertEquals(verify.code, 0, verify.out + verify.err);
  const gone = await runMain(["capture", "delete", "x", "--root", root]);
  assertEquals(gone.code, 1);
  assertOk(/No capture "x"/.test(gone.err), gone.err);
});

Deno.test("capture delete refuses the active capture without --force, and clears the pointer with it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  threeCaptures(root);
  writeActiveCapture(root, "z");
  const refused = await runMain(["capture", "delete", "z", "--root", root]);
  assertEquals(refused.code, 1);
  assertOk(/active capture.*--force/.test(refused.err), refused.err);
  assertOk(Deno.statSync(join(root, "captures", "z.jsonl")).isFile);
  const forced = await runMain(
    ["capture", "delete", "z", "--force", "--root", root],
  );
  assertEquals(forced.code, 0, forced.err);
  assertEquals(
    [...Deno.readDirSync(root)].some((e) => e.name === "active_capture"),
    false,
  );
});

Deno.test("capture delete and store prune say to stop a server that holds the store, and delete nothing", async () => {
  await using srv = await startServer();
  srv.store.sink("x").emit(annotation(fixedContext("x"), { type: "note" }));
  srv.store.flush();
  for (
    const args of [
      ["capture", "delete", "x"],
      ["store", "prune", "--older-than", "0s"],
    ]
  ) {
    const r = await runMain([...args, "--root", srv.root]);
    assertEquals(r.code, 1, r.out);
    assertOk(
      /stop the server first \(deno task ingest stop\)/.test(r.err),
      r.err,
    );
  }
  assertEquals(srv.store.hasCapture("x"), true);
});

Deno.test("pruneCaptures() deletes the captures last written before the cut-off but the active one; a dry run only names them", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  threeCaptures(root);
  writeActiveCapture(root, "z");
  const later = Date.now() + 31 * 86_400_000;
  const month = 30 * 86_400_000;
  const none = pruneCaptures(root, { olderThanMs: month, now: Date.now() });
  assertEquals(none.expired, []);
  const dry = pruneCaptures(root, {
    olderThanMs: month,
    now: later,
    dryRun: true,
  });
  assertEquals([dry.expired, dry.deleted, dry.kept_active], [
    ["x", "y"],
    [],
    "z",
  ]);
  assertEquals(blobCount(root), 2);
  const r = pruneCaptures(root, { olderThanMs: month, now: later });
  assertEquals(r.deleted.map((d) => d.capture_id), ["x", "y"]);
  assertEquals(blobCount(root), 0);
  assertEquals(
    [...Deno.readDirSync(join(root, "captures"))].map((e) => e.name),
    ["z.jsonl"],
  );
  const bad = await runMain([
    "store",
    "prune",
    "--older-than",
    "a month",
    "--root",
    root,
  ]);
  assertEquals(bad.code, 2);
  assertOk(
    /--older-than takes a whole number and a unit/.test(bad.err),
    bad.err,
  );
});
