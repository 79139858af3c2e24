import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { captureReportData } from "../../lib/report/capture_data.ts";
import { renderCaptureReport } from "../../lib/report/capture_html.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { main as compileMain } from "../../compile.ts";
import { tempDir } from "../_helpers.ts";
import { BROWSER, open, required } from "./_browser.ts";

const attr = (s: string) => s.replaceAll("&gt;", ">").replaceAll("&amp;", "&");

// Over 80 lines: one scenario end to end, its steps and checks in order.
Deno.test({
  name:
    "compile.ts report: the package explain view opens in headless Chromium with every node, its grade, evidence counts and example episodes",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "store");
    {
      using store = new HarnessStore(root);
      generateDeskEpisodes(store.sink("desk"), "desk", 60);
    }
    const out = join(dir.path, "out");
    const effects = join(dir.path, "effects.json");
    Deno.writeTextFileSync(effects, JSON.stringify(DESK_EFFECTS));
    assertEquals(
      await compileMain([
        "--capture",
        "desk",
        "--out",
        out,
        "--name",
        "desk",
        "--effects",
        effects,
        "--root",
        root,
        "--json",
      ]),
      0,
    );
    const pkgFile = join(out, "desk.package.json");
    const html = join(dir.path, "desk.html");
    assertEquals(await compileMain(["report", pkgFile, "--out", html]), 0);
    const pkg = JSON.parse(Deno.readTextFileSync(pkgFile)) as BehaviorPackage;
    const png = join(dir.path, "desk.png");
    const { dom, console } = await open(html, png);
    assertEquals(console, [], "no console output or errors");
    assertOk(dom.includes('data-status="rendered"'));
    assertOk(!dom.includes("data-errors"), dom.slice(0, 400));
    assertOk(dom.includes('id="verification" data-ok="true"'));

    // Every node is in the graph and the table, with its grade and counts.
    const rows = new Map(
      [
        ...dom.matchAll(
          /data-node-row="([^"]*)" data-grade="([^"]*)" data-support="(\d+)" data-applicable="(\d+)"/g,
        ),
      ].map((m) => [attr(m[1]), [m[2], Number(m[3]), Number(m[4])]]),
    );
    const inGraph = new Set(
      [...dom.matchAll(/data-graph-node="([^"]*)"/g)].map((m) => attr(m[1])),
    );
    const ids = Object.keys(pkg.ir.nodes);
    assertOk(ids.length >= 10, `a tree of ${ids.length} nodes`);
    assertEquals(rows.size, ids.length);
    for (const id of ids) {
      assertOk(inGraph.has(id), `${id} is drawn`);
      assertOk(rows.has(id), `${id} is in the table`);
    }
    for (const p of pkg.provenance) {
      assertEquals(
        rows.get(p.node_id),
        [p.grade, p.support, p.applicable],
        p.node_id,
      );
    }
    // Edges follow the tree.
    const edges = [...dom.matchAll(/data-graph-edge="([^"]*)"/g)].length;
    assertEquals(edges, ids.length - 1);
    // The node shown first has its example episodes in the evidence panel.
    const shown = attr(dom.match(/id="node-detail" data-node="([^"]*)"/)![1]);
    const prov = pkg.provenance.find((p) => p.node_id === shown);
    assertOk(prov, `${shown} has provenance`);
    assertOk(prov.episodes.length > 0);
    for (const e of prov.episodes) {
      assertOk(dom.includes(`data-example="${e}"`), e);
    }
    assertOk(Deno.statSync(png).size > 10_000, "a screenshot was drawn");

    // A file that is not a package is refused with a clear message.
    const bad = join(dir.path, "bad.json");
    Deno.writeTextFileSync(bad, "{}");
    assertEquals(
      await compileMain(["report", bad, "--out", join(dir.path, "x.html")]),
      1,
    );
  },
});

Deno.test({
  name:
    "report: a capture of over 10,000 events opens in headless Chromium, paged, with no errors",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    using store = new HarnessStore(join(dir.path, "store"));
    generateDeskEpisodes(store.sink("big"), "big", 700);
    const data = await captureReportData(store, "big");
    assertOk(data.chain.events >= 10_000, `${data.chain.events} events`);
    const file = join(dir.path, "big.html");
    await Deno.writeTextFile(file, renderCaptureReport(data));
    const { dom, console } = await open(file);
    assertEquals(console, []);
    assertOk(dom.includes('data-status="rendered"'));
    assertOk(!dom.includes("data-errors"));
    // Paged: 50 episodes drawn of 700.
    assertEquals(
      [...dom.matchAll(/<li class="ep[^"]*" data-episode="/g)].length,
      50,
    );
    assertOk(dom.includes("page 1 of 14"), "the episode list is paged");
  },
});
