/**
 * The HTML report shows what a package served at the model gateway did
 * (issue 42, item 4): for the episode, the answers served, each refused
 * call with its arguments and reason, each pass-through and why, and the
 * estimate of tokens saved; the capture figures sum them. Written through
 * the CLI (`ingest.ts report`), opened in headless Chromium. The events are
 * in the shape the gateway records (`tests/control/_package_episode.ts`).
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { BROWSER, open, required } from "./_browser.ts";
import {
  PASS_REASON,
  PKG,
  REFUSE_REASON,
  servedEpisode,
} from "../control/_package_episode.ts";

/** Text as the DOM dump writes it (in a text node). */
function html(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
}

Deno.test({
  name:
    "report: an episode served by a package shows its served answers, refused calls with arguments and reason, pass-throughs and why, and the tokens saved (an estimate)",
  ignore: !BROWSER && !required,
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "store");
    {
      using store = new HarnessStore(root);
      store.sink("c").emitMany(servedEpisode("c", "ep_served"));
    }
    const file = join(dir.path, "c.html");
    const wrote = await runMain(
      ["report", "c", "--out", file, "--root", root],
    );
    assertEquals(wrote.code, 0, wrote.err);
    const { dom, console } = await open(file);
    assertEquals(console, []);
    assertOk(
      dom.includes('data-status="rendered"') && !dom.includes("data-errors"),
    );
    // The digest shortened, the whole id on hover.
    assertOk(
      dom.includes(`title="${PKG}">Package at work (${PKG.slice(0, 26)}…)`),
      "the section",
    );
    const rows = [...dom.matchAll(/data-package-row="([^"]+)"/g)].map((m) =>
      m[1]
    );
    // In the order they happened.
    assertEquals(rows, ["served", "refused", "served", "passed through"]);
    assertOk(
      dom.includes(
        html('find_user_id_by_email {"email":"sofia.li7352@example.com"}'),
      ),
      "a served call with its arguments",
    );
    assertOk(
      dom.includes(
        html(
          'cancel_pending_order {"order_id":"#W0000001","reason":"no longer needed"}',
        ),
      ),
      "the refused call with its arguments",
    );
    assertOk(dom.includes(html(REFUSE_REASON)), "why it was refused");
    assertOk(dom.includes(html(PASS_REASON)), "why it passed through");
    assertOk(
      dom.includes(
        html(
          "2 upstream requests not made; prompt tokens saved: 1,000 to 2,400 (an estimate: each skipped request would have resent at least the prompt of its episode's upstream request before it and at most that of the one after it; 1 had no upstream request before it (counted 0))",
        ),
      ),
      "the estimate, labelled",
    );
    assertOk(dom.includes("Refused answers cost 900 in / 30 out tokens"));
    assertOk(dom.includes('id="figures-package"'), "capture figures");
    // The answers the package made are not model turns.
    assertOk(
      dom.includes(
        "3400 in, 60 out over 3 model turns (and 2 answers a package served)",
      ),
      "tokens over model turns",
    );
    assertEquals([...dom.matchAll(/data-turn="served"/g)].length, 2);
    assertOk(/2 served, 1 refused, 1 passed/.test(dom), "episode list");
  },
});
