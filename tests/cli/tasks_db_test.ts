/**
 * The team-database commands through `deno task`, under the tasks' own
 * narrow flags (the database's host and port, the PG* variables), run
 * from a folder outside the checkout with `HARNESS_DB_URL` naming a
 * private PostgreSQL 15 cluster: no "Requires … access" anywhere.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";
import { message } from "../../lib/trace/episode_events.ts";
import { postgresAvailable, startCluster } from "../_postgres.ts";
import { CHECKOUT, task } from "./_tasks.ts";

const FIXTURE =
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url)
    .pathname;
/** `deno task ingest capture list --db env --json`. */
const CAPTURE_LIST_DB_ENV = [
  "ingest",
  "capture",
  "list",
  "--db",
  "env",
  "--json",
];
const ignore = !postgresAvailable() && !Deno.env.get("CI");

Deno.test({
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  name:
    "deno task ingest db migrate, store push, capture list --db env and compile --db env work with HARNESS_DB_URL under the tasks' flags",
  async fn() {
    await using pg = await startCluster();
    await using dir = await tempDir();
    const home = dir.path;
    Deno.copyFileSync(FIXTURE, `${home}/run.json`);
    const env = { HARNESS_ROOT: `${home}/store`, HARNESS_DB_URL: pg.url };
    const ok = (
      r: { code: number; out: string; err: string },
      what: string,
    ) => {
      assertEquals(r.code, 0, `${what}: ${r.err}${r.out}`);
      assertOk(!/Requires \w+ access/.test(r.err), `${what}: ${r.err}`);
    };
    // The store, filled in-process (the tasks' own import is tested in
    // tasks_elsewhere_test.ts); the database commands below go through
    // deno task.
    const { main } = await import("../../ingest.ts");
    const quiet = { out: () => {}, err: () => {} };
    assertEquals(
      await main([
        "import",
        "--format",
        "tau2",
        `${home}/run.json`,
        "--capture",
        "x",
        "--root",
        env.HARNESS_ROOT,
      ], quiet),
      0,
    );
    const migrated = await task(home, [
      "ingest",
      "db",
      "migrate",
      "--db",
      "env",
    ], env);
    ok(migrated, "db migrate");
    assertOk(/is in place/.test(migrated.out), migrated.out);
    ok(
      await task(home, ["ingest", "store", "push", "--to", "env"], env),
      "push",
    );
    const list = await task(home, CAPTURE_LIST_DB_ENV, env);
    ok(list, "capture list --db env");
    const caps = JSON.parse(list.out) as {
      capture_id: string;
      event_count: number;
    }[];
    assertEquals(caps.length, 1, list.out);
    assertOk(caps[0].capture_id.endsWith(":x"), caps[0].capture_id);
    assertEquals(caps[0].event_count, 934);
    const compiled = await task(home, [
      "compile",
      "--db",
      "env",
      "--capture",
      "x",
      "--out",
      "pkg",
      "--json",
    ], env);
    ok(compiled, "compile --db env");
    assertOk(
      Deno.statSync(JSON.parse(compiled.out).file).isFile,
      compiled.out,
    );
  },
});

Deno.test({
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  name:
    "deno task serve --replicate env replicates under the task's flags; deno task ingest stop ends it",
  async fn() {
    await using pg = await startCluster();
    await using dir = await tempDir();
    const home = dir.path;
    const env = { HARNESS_ROOT: `${home}/store`, HARNESS_DB_URL: pg.url };
    const migrated = await task(home, [
      "ingest",
      "db",
      "migrate",
      "--db",
      "env",
    ], env);
    assertEquals(migrated.code, 0, migrated.err);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "--quiet",
        "--config",
        `${CHECKOUT}deno.json`,
        "serve",
        "--port",
        "0",
        "--replicate",
        "env",
      ],
      cwd: home,
      env: { NO_COLOR: "1", INIT_CWD: home, ...env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!/on (http:\/\/\S+)/.test(text)) {
      const { value, done } = await out.read();
      if (done) break;
      text += value;
    }
    const url = /on (http:\/\/\S+)/.exec(text)?.[1];
    assertOk(url, text);
    const ev = message(fixedContext("rep"), { role: "user", text: "hello" });
    const posted = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ev),
    });
    assertEquals(posted.status, 200, await posted.text());
    // Replicated: the database lists the capture.
    let listed = "";
    await waitFor("the database to list the capture", async () => {
      listed = (await task(home, CAPTURE_LIST_DB_ENV, env)).out;
      return /"rep"|:rep"/.test(listed);
    }, { everyMs: 500 });
    assertOk(/rep"/.test(listed), listed);
    const stop = await task(home, ["ingest", "stop"], env);
    assertEquals(stop.code, 0, stop.err + stop.out);
    assertEquals((await child.status).success, true);
    out.releaseLock();
    await child.stdout.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
  },
});
