/**
 * Help as a newcomer meets it: a usage error prints the command's own
 * lines (not the whole usage), `demo --help` names `--seed`, `export`'s help
 * shows the form the task takes, and `install`'s hosts go by the names
 * users know.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";

Deno.test("ingest.ts: a usage error prints that command's usage lines, not the whole usage", async () => {
  const r = await runMain(["report", "--root", "/nonexistent/x"]);
  assertEquals(r.code, 2);
  assertOk(r.err.includes("report needs a capture id"), r.err);
  assertOk(r.err.includes("ingest.ts report <id> --out FILE.html"), r.err);
  assertOk(!r.err.includes("ingest.ts serve"), r.err);
  assertOk(r.err.split("\n").length < 20, r.err);
  const unknown = await runMain(["zork"]);
  assertEquals(unknown.code, 2);
  assertOk(/Run ingest\.ts --help for every command/.test(unknown.err));
  assertOk(!unknown.err.includes("ingest.ts serve"), unknown.err);
});

Deno.test("ingest.ts --help: demo names --seed, export shows `export <id>`, install names claude-code, gemini-cli, opencode first", async () => {
  const demo = await runMain(["demo", "--help"]);
  assertOk(demo.out.includes("ingest.ts demo [--seed N]"), demo.out);
  const exp = await runMain(["export", "--help"]);
  assertOk(exp.out.includes("ingest.ts export <id> --endpoint URL"), exp.out);
  const install = await runMain(["install", "--help"]);
  assertOk(
    install.out.includes(
      "host: claude-code, gemini-cli or opencode (or host_a, host_b, host_c)",
    ),
    install.out,
  );
});
