import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import { generateDeskEpisodes } from "../../examples/order_desk/order_desk.ts";
import { captureReportData } from "../../lib/report/capture_data.ts";
import { renderCaptureReport } from "../../lib/report/capture_html.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { BROWSER, open, required } from "./_browser.ts";

async function check(store: HarnessStore, id: string, dir: string) {
  const data = await captureReportData(store, id);
  const file = join(dir, `${id}.html`);
  await Deno.writeTextFile(file, renderCaptureReport(data));
  const png = join(dir, `${id}.png`);
  const { dom, console } = await open(file, png);
  assertEquals(console, [], "no console output or errors");
  assertOk(dom.includes('data-status="rendered"'), "the script ran to the end");
  assertOk(!dom.includes("data-errors"), dom.slice(0, 400));
  const first = data.episodes[0];
  assertOk(first.calls.length > 0);
  for (const c of first.calls) {
    assertOk(
      dom.includes(`data-call="${c.index}" data-tool="${c.name}"`),
      `call #${c.index} ${c.name} is shown`,
    );
  }
  const edges = [...dom.matchAll(/data-edge="([^"]*)"/g)].map((m) =>
    m[1].replaceAll("&gt;", ">")
  );
  assertEquals(
    edges,
    first.edges.map((e) => `${e.from}:${e.path}->${e.to}:${e.arg}`),
  );
  assertOk(Deno.statSync(png).size > 10_000, "a screenshot was drawn");
  return { data, dom };
}

Deno.test({
  name:
    "report: the demo capture opens in headless Chromium with every call and lineage edge of the first episode",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    using store = new HarnessStore(join(dir.path, "store"));
    generateDeskEpisodes(store.sink("desk"), "desk", 60);
    const { data, dom } = await check(store, "desk", dir.path);
    assertOk(data.episodes[0].edges.length >= 5);
    assertOk(dom.includes('id="chain" data-ok="true"'));
  },
});

Deno.test({
  name:
    "report: a recorded Claude Code session opens in headless Chromium; a broken spool gets a red banner naming the line",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    await using srv = await startServer();
    const scenario = [...Deno.readDirSync(`${HOSTS_DIR}/host_a`)]
      .filter((e) => e.isDirectory).map((e) => e.name).sort()[0];
    for (const f of scenarioFiles(`${HOSTS_DIR}/host_a/${scenario}`)) {
      const res = await fetch(`${srv.url}/hook/host_a?cap=real`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(f.body),
      });
      await res.body?.cancel();
    }
    await check(srv.store, "real", dir.path);

    // Tamper with one line of the spool: the report still opens, red.
    const spool = join(srv.store.root, "captures", "real.jsonl");
    const lines = (await Deno.readTextFile(spool)).split("\n");
    lines[2] = lines[2].replace('"kind":"', '"kind":"x');
    await Deno.writeTextFile(spool, lines.join("\n"));
    const data = await captureReportData(srv.store, "real");
    assertEquals(data.chain.ok, false);
    const file = join(dir.path, "broken.html");
    await Deno.writeTextFile(file, renderCaptureReport(data));
    const { dom } = await open(file);
    assertOk(dom.includes('id="chain" data-ok="false"'));
    assertOk(/does NOT verify: line 3/.test(dom), dom.slice(0, 3000));
  },
});
