/**
 * The HTML report of a capture: chain status (a red banner where a spool
 * does not verify, naming the line), an episode list (paged), and for the
 * chosen episode a timeline of tool calls and model turns, the call tree
 * with failed and refused calls marked, the exact-lineage graph and its
 * edges, and tokens. Large captures are paged (50 episodes, 200 calls per
 * page), so 10,000 events open without freezing.
 *
 * @module
 */
import type { CaptureReportData } from "./capture_data.ts";
import { htmlPage } from "./page.ts";

const SCRIPT = String.raw`
const app = document.getElementById("app");
const state = { ep: 0, epPage: 0, callPage: 0 };
const EP_PAGE = 50, CALL_PAGE = 200;
function banner() {
  const c = DATA.chain;
  if (c.ok) return h("div", { class: "banner good", id: "chain", "data-ok": "true" },
    "Chain verified: " + c.events + " events, head " + c.head_sequence + " " + c.head_hash);
  const p = c.problem;
  return h("div", { class: "banner bad", id: "chain", "data-ok": "false" },
    "Chain does NOT verify" + (p ? ": line " + p.line + " (sequence " + p.sequence + "): " + p.message : "") +
    ". Shown: the " + c.events + " events before the break (head " + c.head_sequence + ").");
}
function episodeList() {
  const eps = DATA.episodes;
  const from = state.epPage * EP_PAGE;
  return h("section", { id: "episodes" }, h("h2", {}, "Episodes (" + eps.length + ")"),
    h("ul", {}, eps.slice(from, from + EP_PAGE).map((e, k) => {
      const i = from + k;
      return h("li", { class: "ep" + (i === state.ep ? " sel" : ""), "data-episode": e.episode_id,
        on: { click: () => { state.ep = i; state.callPage = 0; render(); } } },
        h("span", { class: e.success === true ? "ok" : e.success === false ? "failed" : "muted" },
          e.success === true ? "✓ " : e.success === false ? "✗ " : "· "),
        e.episode_id, h("span", { class: "muted" }, " " + e.calls.length + " calls"));
    })),
    pager(eps.length, EP_PAGE, state.epPage, (p) => { state.epPage = p; render(); }));
}
function timeline(e, calls) {
  const span = Math.max(1, e.duration_ms);
  const W = 760, row = 16, left = 170;
  const x = (ms) => left + (W - left - 10) * ms / span;
  const rows = calls.map((c, k) => svg("g", { "data-timeline-call": c.index },
    svg("text", { x: 4, y: 12 + k * row, "font-size": 11 }, "#" + c.index + " " + c.name.slice(0, 24)),
    svg("rect", { x: x(c.start_ms), y: 3 + k * row, width: Math.max(2, x(c.start_ms + c.duration_ms) - x(c.start_ms)),
      height: 10, rx: 2, fill: c.status === "ok" ? "#43a047" : c.status === "refused" ? "#ef6c00" : c.status === "failed" ? "#c62828" : "#9e9e9e" },
      svg("title", {}, c.name + " " + c.status + " " + c.duration_ms + " ms"))));
  const y = calls.length * row + 4;
  const turns = e.turns.map((t) => svg("path", { d: "M" + x(t.start_ms) + " " + y + " l-4 8 h8 z", fill: "#3949ab", "data-turn": "" },
    svg("title", {}, "model turn " + (t.model || "") + (t.tokens === null ? "" : " " + t.tokens + " tokens"))));
  return h("section", { id: "timeline" }, h("h2", {}, "Timeline (" + e.duration_ms + " ms; bars: tool calls, ▲ model turns)"),
    svg("svg", { width: W, height: y + 14, viewBox: "0 0 " + W + " " + (y + 14) }, rows, turns,
      svg("text", { x: 4, y: y + 11, "font-size": 11 }, "model turns: " + e.turns.length)));
}
function callTree(e, calls) {
  const kids = new Map();
  for (const c of calls) {
    const p = c.parent === null || !calls.some((d) => d.index === c.parent) ? -1 : c.parent;
    if (!kids.has(p)) kids.set(p, []);
    kids.get(p).push(c);
  }
  const item = (c) => h("li", { "data-call": c.index, "data-tool": c.name, "data-status": c.status },
    h("span", { class: c.status }, "#" + c.index + " " + c.name + " [" + c.status + "] "),
    h("span", { class: "muted" }, c.duration_ms + " ms "), h("code", {}, c.args), " → ", h("code", {}, c.result),
    kids.has(c.index) ? h("ul", {}, kids.get(c.index).map(item)) : null);
  return h("section", { id: "calls" }, h("h2", {}, "Calls (" + e.calls.length + ")"),
    h("ul", {}, (kids.get(-1) || []).map(item)),
    pager(e.calls.length, CALL_PAGE, state.callPage, (p) => { state.callPage = p; render(); }));
}
function lineage(e) {
  const n = e.steps.length, rowH = 22, W = 760;
  const y = (i) => 14 + i * rowH;
  const nodes = e.steps.map((s) => svg("g", {},
    svg("circle", { cx: 20, cy: y(s.index), r: 6, fill: "#1d2330" }),
    svg("text", { x: 34, y: y(s.index) + 4, "font-size": 12 }, "#" + s.index + " " + s.tool)));
  const arcs = e.edges.map((d) => {
    const a = y(d.from), b = y(d.to), bulge = 26 + (b - a) * 0.6;
    return svg("path", { d: "M20 " + a + " C" + (20 - bulge) + " " + a + " " + (20 - bulge) + " " + b + " 20 " + b,
      fill: "none", stroke: "#3949ab", "stroke-width": 1.2, "data-arc": "" },
      svg("title", {}, "#" + d.from + " ." + d.path + " → #" + d.to + " " + d.arg));
  });
  const h0 = Math.max(30, y(n) );
  return h("section", { id: "lineage" }, h("h2", {}, "Exact lineage (" + e.edges.length + " edges)"),
    svg("svg", { width: W, height: h0, viewBox: "-120 0 " + W + " " + h0 }, arcs, nodes),
    h("ul", {}, e.edges.map((d) => h("li", { "data-edge": d.from + ":" + d.path + "->" + d.to + ":" + d.arg },
      "#" + d.from + " " + e.steps[d.from].tool + " ", h("code", {}, "result." + d.path), " → #" + d.to + " " + e.steps[d.to].tool + " ",
      h("code", {}, d.arg)))),
    h("table", {}, h("tr", {}, h("th", {}, "step"), h("th", {}, "argument"), h("th", {}, "value"), h("th", {}, "source"), h("th", {}, "kind")),
      e.steps.flatMap((s) => s.args.map((a) => h("tr", {}, h("td", {}, "#" + s.index + " " + s.tool), h("td", {}, h("code", {}, a.arg)),
        h("td", {}, h("code", {}, a.value)), h("td", {}, a.source === null ? "—" : h("code", {}, a.source)), h("td", {}, a.kind))))));
}
function tokens(e) {
  return h("section", { id: "tokens" }, h("h2", {}, "Tokens"),
    e.tokens === null ? h("span", { class: "muted" }, "not recorded for this episode")
      : h("span", {}, e.tokens.input + " in, " + e.tokens.output + " out over " + e.turns.length + " model turns"));
}
function render() {
  const e = DATA.episodes[state.ep];
  const from = state.callPage * CALL_PAGE;
  const calls = e ? e.calls.slice(from, from + CALL_PAGE) : [];
  app.replaceChildren(
    h("header", {}, h("h1", {}, "Capture " + DATA.capture_id),
      h("div", {}, DATA.totals.episodes + " episodes, " + DATA.totals.steps + " steps, " + DATA.totals.attributed + " of " +
        DATA.totals.identifier_values + " identifier values with an exact source")),
    banner(),
    h("main", {}, h("div", {}, episodeList()),
      e ? h("div", { id: "episode", "data-episode": e.episode_id },
        h("h2", {}, "Episode " + e.episode_id + " (" + e.events + " events)"),
        timeline(e, calls), callTree(e, calls), lineage(e), tokens(e))
        : h("div", {}, "No episodes.")));
}
render();
`;

/**
 * Render a capture's report as one self-contained HTML file.
 *
 * @param data From {@linkcode captureReportData}.
 * @returns The HTML text.
 */
export function renderCaptureReport(data: CaptureReportData): string {
  return htmlPage(`harness: capture ${data.capture_id}`, data, SCRIPT);
}
