/**
 * Report benchmark and screenshots: builds the HTML report of a
 * 10,000-event capture (beside a plain `JSON.stringify` of the same events,
 * the baseline) and opens it in headless Chromium (beside an empty page,
 * the browser's own start-up), then draws the screenshots people look at
 * under `bench/out/`: the demo capture, a recorded Claude Code session
 * (host_a fixture) and the compiled package's explain view.
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
import { compileBehavior } from "../lib/compiler/package.ts";
import { loadEpisodes } from "../lib/lineage/episodes.ts";
import { IngestServer } from "../lib/ingest/server.ts";
import type { TraceEvent } from "../lib/trace/mod.ts";
import { BROWSER, open } from "../tests/report/_browser.ts";
import { scenarioFiles } from "../tests/_server.ts";
import { HOSTS_DIR } from "../tests/_helpers.ts";
import { type BenchRow, printTable } from "./_table.ts";

const OUT = new URL("./out/", import.meta.url).pathname;

/** Run the benchmark, draw the screenshots, print the table. */
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
    generateDeskEpisodes(store.sink("big"), "big", 700);
    const events: TraceEvent[] = [];
    for await (const ev of store.readEvents("big")) events.push(ev);
    let t = performance.now();
    JSON.stringify(events);
    const baseMs = performance.now() - t;
    t = performance.now();
    const html = renderCaptureReport(await captureReportData(store, "big"));
    const buildMs = performance.now() - t;
    const big = join(dir, "big.html");
    Deno.writeTextFileSync(big, html);
    const empty = join(dir, "empty.html");
    Deno.writeTextFileSync(empty, "<!doctype html><title>x</title>");
    await open(empty); // warm up
    t = performance.now();
    await open(empty);
    const emptyMs = performance.now() - t;
    t = performance.now();
    const { dom } = await open(big);
    const openMs = performance.now() - t;
    rows.push(
      {
        name: "events in the capture",
        value: events.length.toLocaleString("en-US"),
      },
      {
        name: "build the report (data + HTML)",
        value: `${Math.round(buildMs)} ms (${
          (buildMs / baseMs).toFixed(1)
        }x a JSON.stringify of the events; ${
          (html.length / 1e6).toFixed(1)
        } MB)`,
      },
      {
        name: "open in headless Chromium, rendered",
        value: `${Math.round(openMs)} ms (${
          (openMs / emptyMs).toFixed(2)
        }x an empty page)`,
        target: "renders",
        met: dom.includes('data-status="rendered"') ? "yes" : "no",
      },
    );

    // Screenshots.
    generateDeskEpisodes(store.sink("desk"), "desk", 60);
    const demo = join(dir, "demo.html");
    Deno.writeTextFileSync(
      demo,
      renderCaptureReport(await captureReportData(store, "desk")),
    );
    await open(demo, join(OUT, "report_demo.png"));
    const server = new IngestServer(store, { port: 0 });
    const url = await server.start();
    const scenario = [...Deno.readDirSync(`${HOSTS_DIR}/host_a`)]
      .filter((e) => e.isDirectory).map((e) => e.name).sort()[0];
    for (const f of scenarioFiles(`${HOSTS_DIR}/host_a/${scenario}`)) {
      const res = await fetch(`${url}/hook/host_a?cap=host_a`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(f.body),
      });
      await res.body?.cancel();
    }
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
  return rows;
}

if (import.meta.main) await reportBench();
