import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { captureReportData } from "../../lib/report/capture_data.ts";
import { renderCaptureReport } from "../../lib/report/capture_html.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { HOST_A_SCENARIOS, recordHostA } from "./_host_a_capture.ts";
import { BROWSER, open, required } from "./_browser.ts";

Deno.test({
  name:
    "report: a real Claude Code capture shows the conversation, outcome reasons, capture figures, a working filter and search, and episodes after a chain break",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    await using srv = await startServer();
    await recordHostA(srv.url, dir.path, "real", HOST_A_SCENARIOS);
    const data = await captureReportData(srv.store, "real");
    assertEquals(data.episodes.length, 3);
    assertEquals(data.figures.tokens, { input: 1200, output: 240 });
    const bash = data.figures.tools.find((t) => t.name === "Bash")!;
    assertOk(bash.failed >= 1 && bash.refused >= 1, JSON.stringify(bash));
    const file = join(dir.path, "real.html");
    await Deno.writeTextFile(file, renderCaptureReport(data));
    // The committed screenshot (bench/out/report_host_a.png) is drawn by
    // `deno task bench report`; a test writes only its temp dir.
    const { dom, console } = await open(file, join(dir.path, "report.png"));
    assertEquals(console, []);
    assertOk(
      dom.includes('data-status="rendered"') && !dom.includes("data-errors"),
    );
    // The conversation of the first episode: the request and the replies.
    const basic = data.episodes[0];
    const user = basic.messages.find((m) => m.role === "user")!;
    assertOk(dom.includes(user.text.slice(0, 40).replaceAll("&", "&amp;")));
    assertOk(dom.includes("I will read the notes first."));
    assertOk(/data-role="assistant"/.test(dom));
    assertOk(dom.includes('id="outcome"'));
    assertOk(dom.includes("1200 in, 240 out"), "capture tokens");
    assertOk(dom.includes('data-tool-row="Bash"'));
    assertOk(!dom.includes("Timeline (0 ms"));

    // Filter: failed calls only, one tool; search; a link to an episode.
    const denied = data.episodes[1].episode_id;
    const f = await open(`${file}#calls=failed&tool=Bash&q=lab-denied`);
    const shownCalls = [
      ...f.dom.matchAll(
        /data-call="\d+" data-tool="([^"]+)" data-status="([^"]+)"/g,
      ),
    ];
    assertOk(shownCalls.length > 0);
    for (const m of shownCalls) assertOk(m[2] !== "ok", m[0]);
    const listed = [
      ...f.dom.matchAll(/class="ep[^"]*" data-episode="([^"]+)"/g),
    ].map((m) => m[1]);
    assertEquals(listed, [denied]);
    const none = await open(`${file}#q=no-such-text-anywhere`);
    assertEquals(
      [...none.dom.matchAll(/class="ep[^"]*" data-episode=/g)].length,
      0,
    );
    const linked = await open(`${file}#ep=${encodeURIComponent(denied)}`);
    assertOk(linked.dom.includes(`id="episode" data-episode="${denied}"`));

    // A one-byte change in the middle: every later episode still shown, marked.
    const spool = join(srv.store.root, "captures", "real.jsonl");
    const lines = (await Deno.readTextFile(spool)).split("\n");
    const at = Math.floor(lines.length / 3);
    lines[at] = lines[at].replace('"sequence":', '"sequence": ');
    await Deno.writeTextFile(spool, lines.join("\n"));
    const broken = await captureReportData(srv.store, "real");
    assertEquals(broken.chain.ok, false);
    assertEquals(broken.episodes.length, 3);
    const after = broken.episodes.filter((e) => e.after_break).length;
    assertOk(after >= 2, `${after} episodes after the break`);
    const bfile = join(dir.path, "broken.html");
    await Deno.writeTextFile(bfile, renderCaptureReport(broken));
    const b = await open(bfile);
    assertEquals(
      [...b.dom.matchAll(/class="ep[^"]*after-break/g)].length,
      after,
    );
  },
});
