/**
 * The shell of a self-contained HTML report: inline CSS, the data as a
 * JSON script element, and an inline script; no network, opens from disk.
 * The script sets `data-status="rendered"` on `<body>` when it is done and
 * `data-errors` when something threw, so a browser test can tell.
 *
 * @module
 */

const CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{padding:12px 20px;background:#1d2330;color:#fff}
header h1{font-size:18px;margin:0 0 4px}
main{display:grid;grid-template-columns:280px minmax(0,1fr);gap:16px;padding:16px 20px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:10px 14px;margin-bottom:14px}
h2{font-size:15px;margin:0 0 8px}
.banner{padding:10px 20px;font-weight:600}
.banner.bad{background:#c62828;color:#fff}
.banner.good{background:#e8f5e9;color:#1b5e20}
ul{margin:0;padding-left:18px}
li{margin:2px 0}
.ep{cursor:pointer;list-style:none;margin-left:-18px;padding:3px 6px;border-radius:4px}
.ep.sel{background:#e3ecfb}
.ok{color:#1b5e20}.failed{color:#c62828}.refused{color:#ad5d00}.pending{color:#666}
code{font:12px ui-monospace,monospace;background:#f0f2f5;padding:0 3px;border-radius:3px;word-break:break-all}
code.id{word-break:normal;white-space:nowrap}
h2{overflow-wrap:anywhere}
td.what,div.what{overflow-wrap:anywhere}
table.figures td,table.figures th{padding:2px 3px;font-size:11px;white-space:nowrap}
table.figures td:not(.name),table.figures th:not(:first-child){text-align:right}
table.figures td.name{white-space:normal;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #eceff3;padding:3px 6px;text-align:left;vertical-align:top;font-size:13px}
button{margin:0 4px}
.muted{color:#666}
.msg{margin:4px 0;padding:4px 8px;border-radius:4px;white-space:pre-wrap}
.msg.user{background:#eef3fb}.msg.assistant{background:#f3f0fa}
.fold summary{cursor:pointer}
pre{font:12px ui-monospace,monospace;background:#f0f2f5;padding:6px;border-radius:3px;white-space:pre-wrap;max-height:400px;overflow:auto}
.after-break{border-left:3px solid #c62828}
#filters label{margin-right:8px}
`;

/**
 * A complete HTML page.
 *
 * @param page The title, what the script renders (`data`, embedded as
 *   JSON) and the script's body (it reads `DATA`).
 * @returns The HTML text.
 */
export function htmlPage(
  page: { title: string; data: unknown; script: string },
): string {
  const { title, data, script } = page;
  const json = JSON.stringify(data).replace(/</g, "\\u003c").replace(
    /\u2028|\u2029/g,
    (c) => c === "\u2028" ? "\\u2028" : "\\u2029",
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title><style>${CSS}</style></head>
<body data-status="loading">
<noscript>This report needs JavaScript to draw its views; the data is in the page source.</noscript>
<div id="app"></div>
<script type="application/json" id="data">${json}</script>
<script>
"use strict";
window.addEventListener("error", function (e) {
  document.body.dataset.errors = (document.body.dataset.errors || "") + e.message + "\\n";
});
const DATA = JSON.parse(document.getElementById("data").textContent);
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "on") for (const [ev, f] of Object.entries(v)) el.addEventListener(ev, f);
    else el.setAttribute(k, String(v));
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const kid of kids.flat()) if (kid) el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  return el;
}
function pager(total, size, page, go) {
  const pages = Math.max(1, Math.ceil(total / size));
  if (pages === 1) return null;
  return h("div", { class: "pager" },
    h("button", { disabled: page === 0 ? "" : null, on: { click: () => go(page - 1) } }, "‹"),
    "page " + (page + 1) + " of " + pages,
    h("button", { disabled: page >= pages - 1 ? "" : null, on: { click: () => go(page + 1) } }, "›"));
}
${script}
document.body.dataset.status = "rendered";
</script></body></html>
`;
}

/** Escape text for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) =>
      ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[
        c
      ]!,
  );
}
