/**
 * Report benchmark and screenshots: builds the HTML report of captures of
 * 10,000 and 100,000 events (beside a plain `JSON.stringify` of the same
 * events, the baseline) and opens each in headless Chromium until rendered
 * (beside an empty page, the browser's own start-up), then draws the
 * screenshots people look at under `bench/out/`: the demo capture, a
 * recorded Claude Code session (host_a fixtures through the forwarder, with
 * their transcripts) and the compiled package's explain view. The table is
 * printed and written to `bench/out/report.md`.
 *
 * @module
 */
import { join } from "node:path";
import { HarnessStore } from "../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../examples/order_desk/order_desk.ts";
import { captureReportData } from "../lib/report/capture_data.ts";
import { renderCaptureReport } from "../lib/report/capture_html.ts";
import { packageReportData } from "../lib/report/package_data.ts";
import { renderPackageReport } from "../lib/report/package_html.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import { loadEpisodes } from "../lib/lineage/episodes.ts";
import { IngestServer } from "../lib/ingest/server.ts";
import type { TraceEvent } from "../lib/trace/mod.ts";
import { BROWSER, open } from "../tests/report/_browser.ts";
import {
  HOST_A_SCENARIOS,
  recordHostA,
} from "../tests/report/_host_a_capture.ts";
import { type BenchRow, printTable } from "./_table.ts";
import { renderTable } from "../lib/cli/table.ts";

const OUT = new URL("./out/", import.meta.url).pathname;

/** Episodes of the order-desk demo per size (about 15 events each). */
const SIZES: [label: string, episodes: number][] = [
  ["10,000", 665],
  ["100,000", 6650],
];

/**
 * Build and open the report of one capture size: rows for its build (data
 * + HTML, beside a `JSON.stringify` of the same events) and for opening it
 * in headless Chromium until rendered (beside an empty page).
 */
async function measureSize(
  store: HarnessStore,
  dir: string,
  label: string,
  episodes: number,
  emptyMs: number,
): Promise<BenchRow[]> {
  const cap = `big_${episodes}`;
  generateDeskEpisodes(store.sink(cap), cap, episodes);
  const events: TraceEvent[] = [];
  for await (const ev of store.readEvents(cap)) events.push(ev);
  let t = performance.now();
  JSON.stringify(events);
  const baseMs = performance.now() - t;
  t = performance.now();
  const html = renderCaptureReport(await captureReportData(store, cap));
  const buildMs = performance.now() - t;
  const file = join(dir, `${cap}.html`);
  Deno.writeTextFileSync(file, html);
  t = performance.now();
  const { dom, console: lines } = await open(file);
  const openMs = performance.now() - t;
  const rendered = dom.includes('data-status="rendered"') &&
    !dom.includes("data-errors") && lines.length === 0;
  return [
    {
      name: `${label}: events in the capture`,
      value: events.length.toLocaleString("en-US"),
    },
    {
      name: `${label}: build the report (data + HTML)`,
      value: `${Math.round(buildMs)} ms (${
        (buildMs / baseMs).toFixed(1)
      }x a JSON.stringify of the events; ${(html.length / 1e6).toFixed(1)} MB)`,
    },
    {
      name: `${label}: open in headless Chromium, rendered`,
      value: `${Math.round(openMs)} ms (${
        (openMs / emptyMs).toFixed(2)
      }x an empty page, ${Math.round(emptyMs)} ms)`,
      target: "renders, no errors",
      met: rendered ? "yes" : "no",
    },
  ];
}

/** Run the benchmark, draw the screenshots, print and write the table. */
export async function reportBench(): Promise<BenchRow[]> {
  if (!BROWSER) {
    console.log(
      "report bench: chromium is not installed (apt-get install chromium)",
    );
    return [];
  }
  const dir = await Deno.makeTempDir({ prefix: "harness_bench_report_" });
  const rows: BenchRow[] = [];
  try {
    using store = new HarnessStore(join(dir, "store"));
    const empty = join(dir, "empty.html");
    Deno.writeTextFileSync(empty, "<!doctype html><title>x</title>");
    await open(empty); // warm up
    const t = performance.now();
    await open(empty);
    const emptyMs = performance.now() - t;
    for (const [label, episodes] of SIZES) {
      rows.push(...await measureSize(store, dir, label, episodes, emptyMs));
    }

    // Screenshots.
    generateDeskEpisodes(store.sink("desk"), "desk", 60);
    const demo = join(dir, "demo.html");
    Deno.writeTextFileSync(
      demo,
      renderCaptureReport(await captureReportData(store, "desk")),
    );
    await open(demo, join(OUT, "report_demo.png"));
    // A real Claude Code capture: hooks through the forwarder, which reads
    // the session transcripts (tokens, assistant text), as the browser test.
    const server = new IngestServer(store, { port: 0 });
    const url = await server.start();
    const transcripts = join(dir, "transcripts");
    Deno.mkdirSync(transcripts);
    await recordHostA(url, transcripts, "host_a", HOST_A_SCENARIOS);
    await server.close();
    const host = join(dir, "host_a.html");
    Deno.writeTextFileSync(
      host,
      renderCaptureReport(await captureReportData(store, "host_a")),
    );
    await open(host, join(OUT, "report_host_a.png"));
    const pkg = compileBehavior(await loadEpisodes(store, "desk"), {
      name: "order_desk",
      effects: DESK_EFFECTS,
    }).package;
    const explain = join(dir, "package.html");
    Deno.writeTextFileSync(
      explain,
      renderPackageReport(packageReportData(pkg)),
    );
    await open(explain, join(OUT, "package_explain.png"));
    rows.push({
      name: "screenshots",
      value:
        "bench/out/report_demo.png, report_host_a.png, package_explain.png",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  printTable("HTML report", rows);
  await Deno.writeTextFile(
    join(OUT, "report.md"),
    `## HTML report\n\n${
      renderTable(
        ["measure", "value", "target", "met"],
        rows.map((r) => [r.name, r.value, r.target ?? "-", r.met ?? "-"]),
      )
    }\n`,
  );
  return rows;
}

if (import.meta.main) await reportBench();
