import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import {
  type PackageReportData,
  packageReportData,
} from "../../lib/report/package_data.ts";
import { renderPackageReport } from "../../lib/report/package_html.ts";
import { captureReportData } from "../../lib/report/capture_data.ts";
import { renderCaptureReport } from "../../lib/report/capture_html.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { BROWSER, open, required } from "./_browser.ts";
import { HOST_A_SCENARIOS, recordHostA } from "./_host_a_capture.ts";

/**
 * Open a report with a measuring script run after it rendered; the script's
 * JSON result comes back through `<body data-measure>`.
 */
async function measure<T>(
  dir: string,
  html: string,
  script: string,
): Promise<T> {
  const file = join(dir, `m${crypto.randomUUID()}.html`);
  const probe = `<script>document.body.dataset.measure = JSON.stringify(
    (() => { ${script} })());</script></body>`;
  Deno.writeTextFileSync(file, html.replace("</body>", probe));
  const { dom, console } = await open(file);
  assertEquals(console, []);
  assertOk(!dom.includes("data-errors"), dom.slice(0, 300));
  const m = dom.match(/data-measure="([^"]*)"/);
  assertOk(m, "the measuring script ran");
  return JSON.parse(
    m[1].replaceAll("&quot;", '"').replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">").replaceAll("&#39;", "'").replaceAll(
        "&amp;",
        "&",
      ),
  );
}

interface Label {
  id: string;
  text: string;
  title: string;
  rect: [number, number];
  label: [number, number];
}

const LABELS = `
  return [...document.querySelectorAll("[data-graph-node]")].map((g) => {
    const r = g.querySelector("rect").getBBox(), t = g.querySelector("text");
    const b = t.getBBox();
    return { id: g.getAttribute("data-graph-node"), text: t.textContent,
      title: g.querySelector("title").textContent,
      rect: [r.x, r.x + r.width], label: [b.x, b.x + b.width] };
  });`;

const ID_LINES = `
  return [...document.querySelectorAll("code.id")].map((c) =>
    [c.textContent, c.getClientRects().length]);`;

function deskStore(dir: string): HarnessStore {
  const store = new HarnessStore(join(dir, "store"));
  generateDeskEpisodes(store.sink("desk"), "desk", 60);
  return store;
}

/** The same package with one node's id made long (its parent's link too). */
function withLongId(data: PackageReportData, long: string): PackageReportData {
  const copy = structuredClone(data);
  const node = copy.nodes[copy.nodes.length - 1];
  for (const n of copy.nodes) {
    n.children = n.children.map((c) => c === node.id ? long : c);
  }
  node.id = long;
  return copy;
}

Deno.test({
  name:
    "package view: every graph label fits inside its box, a label too long for the widest box ends in … with the whole label in its title, and no id wraps",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    using store = deskStore(dir.path);
    const pkg = compileBehavior(await loadEpisodes(store, "desk"), {
      name: "order_desk",
      effects: DESK_EFFECTS,
    }).package;
    const data = packageReportData(pkg);
    const html = renderPackageReport(data);
    const labels = await measure<Label[]>(dir.path, html, LABELS);
    assertEquals(labels.length, data.nodes.length);
    for (const l of labels) {
      assertOk(
        l.label[0] >= l.rect[0] && l.label[1] <= l.rect[1],
        `${l.id}: label ${l.label} outside its box ${l.rect}`,
      );
      const n = data.nodes.find((x) => x.id === l.id)!;
      // The desk's labels all fit whole: grade, kind and the full id.
      assertEquals(l.text, `${n.grade ? n.grade + " " : ""}${n.kind} ${n.id}`);
    }
    const lines = await measure<[string, number][]>(dir.path, html, ID_LINES);
    assertOk(lines.length >= data.nodes.length, `${lines.length} ids`);
    for (const [id, n] of lines) assertEquals(n, 1, `${id} is on one line`);

    const long = "n9_" + "warehouse_inventory_reconciliation_".repeat(3) + "x";
    const cut = await measure<Label[]>(
      dir.path,
      renderPackageReport(withLongId(data, long)),
      LABELS,
    );
    const l = cut.find((x) => x.id === long)!;
    assertOk(l.text.endsWith("…") && l.text.length < long.length, l.text);
    assertOk(l.title.includes(long));
    for (const x of cut) {
      assertOk(x.label[1] <= x.rect[1], `${x.id}: ${x.label} in ${x.rect}`);
    }
  },
});

Deno.test({
  name:
    "capture report: the capture figures table fits inside its sidebar, for the demo and for a real Claude Code capture",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    await using srv = await startServer();
    await recordHostA(srv.url, dir.path, "real", HOST_A_SCENARIOS);
    generateDeskEpisodes(srv.store.sink("desk"), "desk", 60);
    for (const cap of ["real", "desk"]) {
      const data = await captureReportData(srv.store, cap);
      assertOk(data.figures.tools.length >= 4, cap);
      const [table, box, scroll, client] = await measure<number[]>(
        dir.path,
        renderCaptureReport(data),
        `const s = document.getElementById("figures");
         const cs = getComputedStyle(s);
         const t = s.querySelector("table").getBoundingClientRect();
         const b = s.getBoundingClientRect();
         return [t.right, b.right - parseFloat(cs.paddingRight) -
           parseFloat(cs.borderRightWidth), s.scrollWidth, s.clientWidth];`,
      );
      assertOk(table <= box + 0.5, `${cap}: table ends at ${table} > ${box}`);
      assertOk(scroll <= client, `${cap}: ${scroll} > ${client}`);
      // Tool names and headers stay whole (one line each).
      const wrapped = await measure<string[]>(
        dir.path,
        renderCaptureReport(data),
        `return [...document.querySelectorAll("#figures td, #figures th")]
           .filter((c) => { const r = document.createRange();
             r.selectNodeContents(c);
             return new Set([...r.getClientRects()].map((x) => x.top)).size > 1; })
           .map((c) => c.textContent);`,
      );
      assertEquals(wrapped, [], `${cap}: cells broken across lines`);
    }
  },
});
