/**
 * The documented `deno task` entries, run the way a user runs them from
 * their own folder: `deno task --config <checkout>/deno.json …` with the
 * working directory outside the checkout, each task under its own flags
 * (never -A), on files and a store that live outside the checkout.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { CHECKOUT, task } from "./_tasks.ts";

const FIXTURE =
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url)
    .pathname;

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "deno task ingest/compile/report/export from another folder work on a data file, a store (HARNESS_ROOT or --root) and an output folder outside the checkout",
  async fn() {
    await using dir = await tempDir();
    const home = dir.path;
    Deno.copyFileSync(FIXTURE, `${home}/run.json`);
    const store = `${home}/stores/team_a`;
    const env = { HARNESS_ROOT: store };

    const imported = await task(home, [
      "ingest",
      "import",
      "--format",
      "tau2",
      "run.json",
      "--capture",
      "x",
    ], env);
    assertEquals(imported.code, 0, imported.err + imported.out);
    assertOk(Deno.statSync(`${store}/harness.db`).isFile);

    const list = await task(home, ["ingest", "capture", "list", "--json"], env);
    assertEquals(list.code, 0, list.err);
    const ids = (JSON.parse(list.out) as { capture_id: string }[]).map((c) =>
      c.capture_id
    );
    assertEquals(ids, ["x"]);

    // The same store named by --root, relative to the user's folder.
    const byFlag = await task(home, [
      "ingest",
      "capture",
      "inspect",
      "x",
      "--root",
      "stores/team_a",
      "--json",
    ]);
    assertEquals(byFlag.code, 0, byFlag.err);
    assertEquals(JSON.parse(byFlag.out).capture.capture_id, "x");
    // A --root the task may not write says how to name it instead.
    const elsewhere = await task(home, [
      "ingest",
      "capture",
      "start",
      "--root",
      "other",
    ]);
    assertEquals(elsewhere.code, 1, elsewhere.out);
    assertOk(/HARNESS_ROOT=DIR/.test(elsewhere.err), elsewhere.err);

    const compiled = await task(home, [
      "compile",
      "--capture",
      "x",
      "--out",
      "pkg",
      "--json",
    ], env);
    assertEquals(compiled.code, 0, compiled.err + compiled.out);
    const pkgs = [...Deno.readDirSync(`${home}/pkg`)].map((e) => e.name)
      .filter((n) => n.endsWith(".package.json"));
    assertEquals(pkgs.length, 1, `${pkgs}`);

    const explained = await task(home, [
      "compile",
      "explain",
      `pkg/${pkgs[0]}`,
      "--json",
    ]);
    assertEquals(explained.code, 0, explained.err);

    const report = await task(home, ["report", "x", "--out", "x.html"], env);
    assertEquals(report.code, 0, report.err + report.out);
    assertOk(Deno.readTextFileSync(`${home}/x.html`).includes("<html"));

    const exported = await task(
      home,
      ["export", "x", "--out", "x.json"],
      env,
    );
    assertEquals(exported.code, 0, exported.err + exported.out);
    assertOk(
      JSON.parse(Deno.readTextFileSync(`${home}/x.json`)).resourceSpans.length,
    );

    // Nothing of it went into the checkout.
    for (const p of ["pkg", "x.html", "x.json", "stores"]) {
      assertOk(
        !exists(`${CHECKOUT}${p}`),
        `${p} was written inside the checkout`,
      );
    }
  },
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
