/**
 * The HTML report of a capture: chain status (a red banner where a spool
 * does not verify, naming the line), an episode list (paged), and for the
 * chosen episode a timeline of tool calls and model turns, what a served
 * package did (answers served, calls refused with their arguments and
 * reason, pass-throughs and why, the estimate of tokens saved), the call
 * tree with failed and refused calls marked, the exact-lineage graph and its
 * edges, and tokens. Large captures are paged (50 episodes, 200 calls per
 * page), so 10,000 events open without freezing.
 *
 * @module
 */
import type { CaptureReportData } from "./capture_report_types.ts";
import { htmlPage } from "./page.ts";

const SCRIPT = String.raw`
const app = document.getElementById("app");
const state = { ep: 0, epPage: 0, callPage: 0, failedOnly: false, failedCalls: false, tool: "", q: "" };
// Links: #ep=<episode id>[&failed=1][&calls=failed][&tool=<name>][&q=<text>]
const link = new URLSearchParams(location.hash.slice(1));
state.failedOnly = link.get("failed") === "1";
state.failedCalls = link.get("calls") === "failed";
state.tool = link.get("tool") || "";
state.q = link.get("q") || "";
const firstMatch = DATA.episodes.findIndex((e) => matches(e));
if (firstMatch >= 0) state.ep = firstMatch;
if (link.get("ep")) { const i = DATA.episodes.findIndex((e) => e.episode_id === link.get("ep")); if (i >= 0) state.ep = i; }
function matches(e) {
  if (state.failedOnly && e.success !== false && !e.calls.some((c) => c.status !== "ok")) return false;
  if (state.tool && !e.calls.some((c) => c.name === state.tool)) return false;
  if (state.q) {
    const q = state.q.toLowerCase();
    const hay = [e.episode_id, e.outcome_reason || "", ...e.messages.map((m) => m.text), ...e.calls.map((c) => c.name + " " + c.args + " " + c.result)];
    if (!hay.some((t) => t.toLowerCase().includes(q))) return false;
  }
  return true;
}
function pretty(text) {
  let t = text;
  try { if (/^[\[{]/.test(text)) t = JSON.stringify(JSON.parse(text), null, 2); } catch (_) { /* clipped */ }
  if (t.length <= 120 && !t.includes("\n")) return h("code", {}, t);
  return h("details", { class: "fold" }, h("summary", {}, h("code", {}, t.slice(0, 100).replace(/\s+/g, " ") + "…")), h("pre", {}, t));
}
function controls() {
  const tools = DATA.figures.tools.map((t) => t.name);
  return h("section", { id: "filters" }, h("h2", {}, "Filter"),
    h("label", {}, h("input", { type: "checkbox", id: "f-failed", checked: state.failedOnly ? "" : null,
      on: { change: (ev) => { state.failedOnly = ev.target.checked; state.epPage = 0; render(); } } }), " failed episodes"), " ",
    h("label", {}, h("input", { type: "checkbox", id: "f-failed-calls", checked: state.failedCalls ? "" : null,
      on: { change: (ev) => { state.failedCalls = ev.target.checked; render(); } } }), " failed calls only"), " ",
    h("select", { id: "f-tool", on: { change: (ev) => { state.tool = ev.target.value; state.epPage = 0; render(); } } },
      h("option", { value: "" }, "any tool"), tools.map((t) => h("option", { value: t, selected: t === state.tool ? "" : null }, t))), " ",
    h("input", { type: "search", id: "f-search", placeholder: "search text, tools, ids", value: state.q,
      on: { change: (ev) => { state.q = ev.target.value; state.epPage = 0; render(); } } }));
}
function figures() {
  const f = DATA.figures;
  return h("section", { id: "figures" }, h("h2", {}, "Capture figures"),
    h("div", {}, "Tokens: " + f.tokens.input + " in, " + f.tokens.output + " out over " + pl(f.turns - f.served_turns, "model turn") +
      (f.served_turns ? " (and " + pl(f.served_turns, "answer") + " a package served)" : "") + (f.tokens.partial ? PARTIAL : "")),
    h("div", {}, "Wall clock: " + (f.first_at || "—") + " → " + (f.last_at || "—") + "; episode duration median " + f.duration_ms.median + " ms, max " + f.duration_ms.max + " ms"),
    f.package ? h("div", { id: "figures-package", class: "what", title: f.package.packages.join(", ") }, "Package " + f.package.packages.map(shortId).join(", ") +
      " in " + pl(f.package.episodes, "episode") + ": " + f.package.requests.served + " served, " + pl(f.package.refused_calls, "refused call") + ", " +
      f.package.requests.passed_through + " passed through, " + f.package.requests.gave_up + " gave up. Tokens: " + f.package.tokens_text) : null,
    h("table", { class: "figures" }, h("tr", {}, h("th", {}, "tool"), h("th", {}, "calls"), h("th", {}, "failed"), h("th", {}, "refused"),
        h("th", { title: "failure rate: failed and refused calls of all calls" }, "fail %")),
      f.tools.map((t) => h("tr", { "data-tool-row": t.name }, h("td", { class: "name" }, t.name), h("td", {}, t.calls), h("td", {}, t.failed), h("td", {}, t.refused),
        h("td", {}, (100 * (t.failed + t.refused) / t.calls).toFixed(1))))));
}
function conversation(e) {
  return h("section", { id: "conversation" }, h("h2", {}, "Conversation (" + e.messages.length + " messages)"),
    e.cwd ? h("div", { class: "muted" }, "working directory " + e.cwd) : null,
    e.messages.length === 0 ? h("span", { class: "muted" }, "no messages recorded")
      : e.messages.map((m) => h("div", { class: "msg " + m.role, "data-role": m.role }, h("b", {}, m.role + ": "), h("span", { class: "text" }, m.text))));
}
const EP_PAGE = 50, CALL_PAGE = 200;
const PARTIAL = " (partial: the hooks could not count every model call; the model gateway sees them all)";
function banner() {
  const c = DATA.chain;
  if (c.ok) return h("div", { class: "banner good", id: "chain", "data-ok": "true" },
    "Chain verified: " + c.events + " events, head " + c.head_sequence + " " + c.head_hash);
  const p = c.problem;
  return h("div", { class: "banner bad", id: "chain", "data-ok": "false" },
    "Chain does NOT verify" + (p ? ": line " + p.line + " (sequence " + p.sequence + "): " + p.message : "") +
    ". Verified: the " + c.events + " events before the break (head " + c.head_sequence + "); " +
    DATA.episodes.filter((e) => e.after_break).length + " episodes with later events are shown, marked \"after the break\".");
}
function episodeList() {
  const eps = DATA.episodes.map((e, i) => [e, i]).filter(([e]) => matches(e));
  const from = state.epPage * EP_PAGE;
  return h("section", { id: "episodes" }, h("h2", {}, "Episodes (" + eps.length + ")"),
    h("ul", {}, eps.slice(from, from + EP_PAGE).map(([e, i]) => {
      return h("li", { class: "ep" + (i === state.ep ? " sel" : "") + (e.after_break ? " after-break" : ""), "data-episode": e.episode_id,
        on: { click: () => { state.ep = i; state.callPage = 0; location.hash = "ep=" + encodeURIComponent(e.episode_id); render(); } } },
        h("span", { class: e.success === true ? "ok" : e.success === false ? "failed" : "muted" },
          e.success === true ? "✓ " : e.success === false ? "✗ " : "· "),
        e.episode_id, h("span", { class: "muted" }, " " + e.calls.length + " calls" +
          (e.package ? ", " + e.package.requests.served + " served, " + e.package.refused.length + " refused, " + e.package.requests.passed_through + " passed" : "")), e.after_break ? h("span", { class: "failed" }, " after the break") : null);
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
  const turns = e.turns.map((t) => svg("path", { d: "M" + x(t.start_ms) + " " + y + " l-4 8 h8 z", fill: t.served ? "#43a047" : "#3949ab", "data-turn": t.served ? "served" : "" },
    svg("title", {}, t.served ? "answer served by the package (no model call)" : "model turn " + (t.model || "") + (t.tokens === null ? "" : " " + t.tokens + " tokens"))));
  const served = e.turns.filter((t) => t.served).length;
  const timed = e.duration_ms > 0 ? e.duration_ms + " ms" : "times not recorded: all events share one timestamp";
  return h("section", { id: "timeline" }, h("h2", {}, "Timeline (" + timed + "; bars: tool calls, ▲ model turns" + (served ? ", green ▲ answers the package served" : "") + ")"),
    svg("svg", { width: W, height: y + 14, viewBox: "0 0 " + W + " " + (y + 14) }, rows, turns,
      svg("text", { x: 4, y: y + 11, "font-size": 11 }, "model turns: " + (e.turns.length - served) + (served ? ", served: " + served : ""))));
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
    h("span", { class: "muted" }, c.duration_ms + " ms "), pretty(c.args), " → ", pretty(c.result),
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
function pl(n, one, many) { return n + " " + (n === 1 ? one : (many || one + "s")); }
function shortId(id) { return id.replace(/(sha256:[0-9a-f]{12})[0-9a-f]{52}/, "$1…"); }
function packageView(e) {
  const a = e.package;
  if (!a) return null;
  const args = (v) => { const t = JSON.stringify(v === undefined ? null : v); return t.length > 300 ? t.slice(0, 300) + "…" : t; };
  const rows = [
    ...a.served.map((s) => ({ seq: s.sequence, kind: s.gave_up ? "gave up" : "served",
      what: s.gave_up ? s.text : s.calls.map((c) => c.tool + " " + args(c.arguments)).join(", "),
      why: s.gave_up ? "the model's calls were refused each time it was asked: the package answered in words" : "answered by the package: no upstream request" })),
    ...a.refused.map((r) => ({ seq: r.sequence, kind: "refused", what: r.tool + " " + args(r.arguments), why: r.reason })),
    ...a.passed_through.map((p) => ({ seq: p.sequence, kind: "passed through", what: "the request, forwarded untouched", why: p.reason })),
  ].sort((x, y) => x.seq - y.seq);
  const cls = { served: "ok", refused: "refused", "gave up": "failed", "passed through": "muted" };
  const c = a.upstream.refused_tokens;
  return h("section", { id: "package" }, h("h2", { title: a.packages.join(", ") }, "Package at work (" + a.packages.map(shortId).join(", ") + ")"),
    h("div", { id: "package-counts" }, a.requests.served + " served, " + pl(a.refused.length, "refused call") + ", " + a.requests.passed_through +
      " passed through, " + a.requests.forwarded + " forwarded, " + a.requests.gave_up + " gave up; " + pl(a.upstream.answers, "upstream answer")),
    h("div", { id: "package-tokens" }, "Tokens: " + a.tokens_text),
    a.upstream.refused_answers ? h("div", { id: "package-refused-cost" }, "Refused answers cost " + c.input + " in / " + c.output + " out tokens (" +
      pl(a.upstream.refused_answers, "upstream answer") + " the agent never saw)") : null,
    h("table", {}, h("tr", {}, h("th", {}, "event"), h("th", {}, "what"), h("th", {}, "call"), h("th", {}, "why")),
      rows.map((r) => h("tr", { "data-package-row": r.kind }, h("td", {}, "#" + r.seq), h("td", { class: cls[r.kind] }, r.kind),
        h("td", { class: "what" }, h("code", {}, r.what)), h("td", { class: "what" }, r.why)))));
}
function tokens(e) {
  return h("section", { id: "tokens" }, h("h2", {}, "Tokens"),
    e.tokens === null ? h("span", { class: "muted" }, "not recorded for this episode")
      : h("span", {}, e.tokens.input + " in, " + e.tokens.output + " out over " + pl(e.turns.filter((t) => !t.served).length, "model turn") + (e.tokens.partial ? PARTIAL : "")));
}
function render() {
  const e = DATA.episodes[state.ep];
  const from = state.callPage * CALL_PAGE;
  const shown = e ? (state.failedCalls ? e.calls.filter((c) => c.status !== "ok") : e.calls) : [];
  const calls = shown.slice(from, from + CALL_PAGE);
  app.replaceChildren(
    h("header", {}, h("h1", {}, "Capture " + DATA.capture_id),
      h("div", {}, pl(DATA.totals.episodes, "episode") + ", " + pl(DATA.totals.steps, "step") + ", " + DATA.totals.attributed + " of " +
        DATA.totals.identifier_values + " identifier values with an exact source")),
    banner(),
    h("main", {}, h("div", {}, controls(), episodeList(), figures()),
      e ? h("div", { id: "episode", "data-episode": e.episode_id },
        h("h2", {}, h("a", { href: "#ep=" + encodeURIComponent(e.episode_id), id: "ep-link" }, "Episode " + e.episode_id),
          " (" + e.events + " events, started " + e.started_at + ")", e.after_break ? h("span", { class: "failed" }, " — after the chain break: not verified") : null),
        h("div", { id: "outcome", class: e.success === false ? "failed" : e.success === true ? "ok" : "muted" },
          (e.success === true ? "✓ succeeded" : e.success === false ? "✗ failed" : "· no outcome") + (e.outcome_reason ? " — " + e.outcome_reason : "")),
        conversation(e), packageView(e), timeline(e, calls), callTree(e, calls), lineage(e), tokens(e))
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
  return htmlPage({
    title: `harness: capture ${data.capture_id}`,
    data,
    script: SCRIPT,
  });
}
