/**
 * The HTML explain view of a behavior package: a verification banner (red
 * when structure or replay failed), the node graph (a tree drawn left to
 * right, each node coloured by its evidence grade, E0 red to E4 green),
 * the chosen node's evidence (why, support of applicable, counterexamples,
 * example episodes, candidates, residual instructions), and a table of
 * every node (paged at 200). Graph boxes are as wide as the widest label
 * (176 to 360 px, measured in the label font; a longer label ends in "…" and
 * its title holds it whole); ids never wrap. Self-contained like the capture report.
 *
 * @module
 */
import type { PackageReportData } from "./package_data.ts";
import { htmlPage } from "./page.ts";

const SCRIPT = String.raw`
const app = document.getElementById("app");
const state = { node: DATA.nodes.length ? DATA.nodes[0].id : null, page: 0 };
const PAGE = 200;
const GRADE_COLOUR = { E0: "#c62828", E1: "#ef6c00", E2: "#f9a825", E3: "#7cb342", E4: "#2e7d32" };
const byId = new Map(DATA.nodes.map((n) => [n.id, n]));
function banner() {
  const v = DATA.verification;
  const ok = v.structural_ok && v.replay_passed === v.replay_checks;
  return h("div", { class: "banner " + (ok ? "good" : "bad"), id: "verification", "data-ok": String(ok) },
    (ok ? "Verified: " : "Verification FAILED: ") + "structure " + (v.structural_ok ? "ok" : "broken") +
    "; replay " + v.replay_passed + "/" + v.replay_checks + " checks over " + v.episodes_replayed +
    " episodes (" + v.episodes_clean + " clean)" + (v.promoted_to_e4 ? "; promoted to E4" : ""));
}
const LABEL_FONT = "11px system-ui, sans-serif";
const MIN_BOX = 176, MAX_BOX = 360, PAD = 6;
// Label widths measured in the font the SVG text uses (a canvas needs no layout).
const measureCtx = document.createElement("canvas").getContext("2d");
function textWidth(text) {
  measureCtx.font = LABEL_FONT;
  return measureCtx.measureText(text).width;
}
/** The label cut to fit a width, ending in an ellipsis when cut. */
function fitLabel(text, width) {
  if (textWidth(text) <= width) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (textWidth(text.slice(0, mid) + "…") <= width) lo = mid; else hi = mid - 1;
  }
  return text.slice(0, lo) + "…";
}
function graph() {
  const rowH = 26;
  const nodes = DATA.nodes;
  const label = (n) => (n.grade ? n.grade + " " : "") + n.kind + " " + n.id;
  const widest = Math.max(0, ...nodes.map((n) => textWidth(label(n))));
  const boxW = Math.ceil(Math.min(MAX_BOX, Math.max(MIN_BOX, widest + 2 * PAD + 2)));
  const colW = boxW + 14;
  const row = new Map(nodes.map((n, i) => [n.id, i]));
  const maxDepth = Math.max(0, ...nodes.map((n) => n.depth));
  const W = (maxDepth + 1) * colW + 20, H = nodes.length * rowH + 10;
  const y = (id) => 5 + row.get(id) * rowH;
  const x = (n) => 5 + n.depth * colW;
  const edges = [];
  for (const n of nodes) for (const c of n.children) {
    const k = byId.get(c);
    if (!k) continue;
    edges.push(svg("path", { d: "M" + (x(n) + 8) + " " + (y(n.id) + 20) + " V" + (y(c) + 10) + " H" + x(k),
      fill: "none", stroke: "#9aa3b0", "data-graph-edge": n.id + "->" + c }));
  }
  const boxes = nodes.map((n) => svg("g", { "data-graph-node": n.id, "data-grade": n.grade || "",
      style: "cursor:pointer" },
    svg("rect", { x: x(n), y: y(n.id), width: boxW, height: 20, rx: 4,
      fill: n.id === state.node ? "#e3ecfb" : "#fff", stroke: GRADE_COLOUR[n.grade] || "#9aa3b0", "stroke-width": 2 }),
    svg("text", { x: x(n) + PAD, y: y(n.id) + 14, "font-size": 11, style: "font:" + LABEL_FONT },
      fitLabel(label(n), boxW - 2 * PAD - 2)),
    svg("title", {}, label(n) + "\n" + n.text)));
  const el = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, id: "graph" }, edges, boxes);
  for (const g of el.querySelectorAll("[data-graph-node]")) {
    g.addEventListener("click", () => { state.node = g.getAttribute("data-graph-node"); render(); });
  }
  return h("section", { id: "node-graph" }, h("h2", {}, "Node graph (" + nodes.length + " nodes; border: grade)"),
    h("div", { style: "overflow:auto;max-height:70vh" }, el));
}
function detail() {
  const n = byId.get(state.node);
  if (!n) return h("section", { id: "node-detail" }, "No nodes.");
  return h("section", { id: "node-detail", "data-node": n.id },
    h("h2", {}, n.id + " — " + n.kind + (n.grade ? ", " + n.grade : "")),
    h("p", {}, h("code", {}, n.text)),
    n.why ? h("p", {}, "Why: " + n.why) : null,
    n.grade ? h("p", { class: "evidence" }, n.support + " supporting of " + n.applicable + " applicable episodes, " +
      n.counterexamples + " counterexamples") : h("p", { class: "muted" }, "Structure (no evidence of its own)."),
    n.episodes.length ? h("p", {}, "Example episodes: ", n.episodes.map((e) => h("code", { class: "id", "data-example": e }, e)).flatMap((c) => [c, " "])) : null,
    n.instructions ? h("p", {}, "Model instructions: " + n.instructions) : null,
    n.candidates.length ? h("table", {}, h("tr", {}, ["candidate", "claim", "grade", "support", "variety"].map((t) => h("th", {}, t))),
      n.candidates.map((c) => h("tr", { "data-candidate": c.id },
        h("td", {}, c.type + " " + c.key), h("td", {}, h("code", {}, c.claim)),
        h("td", { class: c.status === "contested" ? "failed" : "" }, c.grade + (c.status === "contested" ? " contested" : "")),
        h("td", {}, c.support + "/" + c.applicable), h("td", {}, c.variety)))) : null);
}
function table() {
  const from = state.page * PAGE;
  return h("section", { id: "node-table" }, h("h2", {}, "All nodes"),
    h("table", {}, h("tr", {}, ["node", "kind", "grade", "support", "counterexamples", "what", "example episodes"].map((t) => h("th", {}, t))),
      DATA.nodes.slice(from, from + PAGE).map((n) => h("tr", { "data-node-row": n.id, "data-grade": n.grade || "",
          "data-support": n.support, "data-applicable": n.applicable, on: { click: () => { state.node = n.id; render(); } } },
        h("td", {}, "  ".repeat(n.depth), h("code", { class: "id" }, n.id)), h("td", {}, n.kind), h("td", {}, n.grade || "—"),
        h("td", {}, n.grade ? n.support + "/" + n.applicable : ""), h("td", {}, n.grade ? n.counterexamples : ""),
        h("td", { class: "what" }, n.text), h("td", {}, n.episodes.slice(0, 3).join(", "))))),
    pager(DATA.nodes.length, PAGE, state.page, (p) => { state.page = p; render(); }));
}
function render() {
  const side = h("div", {}, h("section", { id: "package" }, h("h2", {}, "Package"),
    h("ul", {}, h("li", {}, DATA.episodes + " episodes, fidelity " + DATA.fidelity),
      h("li", {}, "capabilities: " + DATA.capabilities.join(", ")),
      h("li", {}, h("code", {}, DATA.digest)))),
    DATA.verification.problems.length ? h("section", { id: "problems" }, h("h2", {}, "Problems"),
      h("ul", {}, DATA.verification.problems.map((p) => h("li", { class: "failed" }, p)))) : null,
    detail());
  app.replaceChildren(
    h("header", {}, h("h1", {}, "Package " + DATA.name + " " + DATA.version), h("div", {}, "harness explain view")),
    banner(), h("main", {}, side, h("div", {}, graph(), table())));
}
render();
`;

/**
 * Render a package's explain view.
 *
 * @param data From {@linkcode packageReportData}.
 * @returns The HTML text.
 */
export function renderPackageReport(data: PackageReportData): string {
  return htmlPage({
    title: `harness package ${data.name}`,
    data,
    script: SCRIPT,
  });
}
