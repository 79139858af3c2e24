import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { CaptureCoordinator } from "../../lib/control/coordinator.ts";
import { connectDb } from "../../lib/team/db.ts";
import { resolveDbTarget } from "../../lib/team/db_target.ts";
import { postgresAvailable, startCluster } from "../_postgres.ts";
import { tempDir } from "../_helpers.ts";
import { runMain as main } from "../_cli.ts";

const ignore = !postgresAvailable() && !Deno.env.get("CI");
const opts = { ignore, sanitizeOps: false, sanitizeResources: false };

Deno.test("resolveDbTarget() takes the password from ~/.pgpass and the host from PGHOST, and a malformed URL's message never shows the password", () => {
  const env: Record<string, string> = { PGHOST: "db.example", HOME: "/h" };
  const t = resolveDbTarget("postgres://harness@/team", {
    env: (n) => env[n],
    readFile: (p) =>
      p === "/h/.pgpass"
        ? "other:5432:*:*:no\ndb.example:*:team:harness:pa\\:ss\n"
        : null,
  });
  assertEquals([t.host, t.port, t.user, t.database, t.password], [
    "db.example",
    5432,
    "harness",
    "team",
    "pa:ss",
  ]);
  assertEquals(t.display, "postgres://harness@db.example:5432/team");
  for (
    const bad of [
      "postgres://harness:hunter2@[bad/x",
      "mysql://u:hunter2@h/x",
      "",
    ]
  ) {
    try {
      resolveDbTarget(bad, { env: () => undefined });
      assertOk(false, `accepted ${bad}`);
    } catch (err) {
      assertOk(
        !(err as Error).message.includes("hunter2"),
        (err as Error).message,
      );
    }
  }
});

Deno.test({
  ...opts,
  name:
    "the team database in daily use: --db '' is an error, unmigrated says run db migrate, the view keeps label and status, a re-push counts everything already there, a newer schema is refused for reads",
  async fn() {
    await using pg = await startCluster();
    await using dir = await tempDir();
    const empty = await main(["capture", "list", "--db", ""]);
    assertEquals(empty.code, 2, empty.err);
    assertOk(/--db is empty/.test(empty.err), empty.err);
    const unmigrated = await main(["capture", "list", "--db", pg.url]);
    assertEquals(unmigrated.code, 1);
    assertOk(/db migrate/.test(unmigrated.err), unmigrated.err);
    assertOk(
      !/relation .* does not exist/.test(unmigrated.err),
      unmigrated.err,
    );
    {
      using store = new HarnessStore(dir.path);
      const coord = new CaptureCoordinator(store);
      coord.startCapture({ id: "run_1", label: "nightly" });
      coord.finishCapture("run_1");
    }
    assertEquals((await main(["db", "migrate", "--db", pg.url])).code, 0);
    const push = [
      "store",
      "push",
      "--to",
      pg.url,
      "--root",
      dir.path,
      "--json",
    ];
    const first = await main(push);
    assertEquals(first.code, 0, first.err);
    const again = await main(push);
    const cap = JSON.parse(again.out).captures[0];
    assertEquals([cap.shipped, cap.skipped], [0, cap.head]);
    const list = await main(["capture", "list", "--db", pg.url, "--json"]);
    const rec = JSON.parse(list.out)[0];
    assertEquals([rec.label, rec.status], ["nightly", "finished"]);
    const sql = await connectDb(pg.url);
    try {
      await sql`UPDATE harness_meta SET value = '99' WHERE key = 'schema'`;
    } finally {
      await sql.end();
    }
    const newer = await main(["capture", "list", "--db", pg.url]);
    assertEquals(newer.code, 1);
    assertOk(/newer than this harness/.test(newer.err), newer.err);
  },
});

Deno.test({
  ...opts,
  name:
    "store push counts every event already there past the first batch of 5000: 12,000 then 10,000 more, and a re-push of 22,000",
  async fn() {
    await using pg = await startCluster();
    await using dir = await tempDir();
    const emit = (n: number) => {
      using store = new HarnessStore(dir.path);
      const sink = store.sink("big");
      for (let i = 0; i < n; i++) {
        sink.emit(annotation({
          captureId: "big",
          episodeId: `ep_${Math.floor(i / 100)}`,
          source: { host: "harness", adapter: "test", model: null },
        }, { type: "note", i }));
      }
    };
    const push = async () => {
      const r = await main([
        "store",
        "push",
        "--to",
        pg.url,
        "--root",
        dir.path,
        "--json",
      ]);
      assertEquals(r.code, 0, r.err);
      const cap = JSON.parse(r.out).captures[0];
      return [cap.shipped, cap.skipped, cap.head];
    };
    emit(12_000);
    assertEquals(await push(), [12_000, 0, 12_000]);
    emit(10_000);
    assertEquals(await push(), [10_000, 12_000, 22_000]);
    assertEquals(await push(), [0, 22_000, 22_000]);
    const list = await main(["capture", "list", "--db", pg.url, "--json"]);
    assertEquals(JSON.parse(list.out)[0].event_count, 22_000);
  },
});
