/**
 * `install --gateway` with other options: `--user` edits the user-level
 * settings (and doctor finds them), and the flag is refused together with
 * `--proxy` (gemini-cli's is `gateway_install_gemini_test.ts`).
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { runMain as run } from "../_cli.ts";
import { install, uninstall } from "../../lib/cli/cmd_install.ts";
import type { InstallArgs } from "../../lib/cli/install_args.ts";
import { checkHooks } from "../../lib/cli/cmd_doctor.ts";
import { quiet } from "./_quiet.ts";
import { isThere, names } from "./_gateway_install.ts";

Deno.test("install --user --gateway edits the user-level settings under HOME and XDG_CONFIG_HOME, and doctor finds them there", async () => {
  await using home = await tempDir();
  const xdg = join(home.path, "xdg");
  Deno.mkdirSync(join(xdg, "opencode"), { recursive: true });
  const oc = join(xdg, "opencode", "opencode.json");
  const ocOriginal = `{ "theme": "tokyonight" }\n`;
  Deno.writeTextFileSync(oc, ocOriginal);
  const url = "http://127.0.0.1:9";
  const user = (host: string): InstallArgs => ({
    host,
    user: true,
    home: home.path,
    xdgConfigHome: xdg,
    mode: "http",
    url,
    forwarderCommand: `'/usr/bin/deno' run '/x/ingest.ts' hook ${host}`,
    gateway: true,
  });
  assertEquals(install(user("host_a"), quiet), 0);
  assertEquals(install(user("host_c"), quiet), 0);
  assertEquals(
    JSON.parse(Deno.readTextFileSync(join(home.path, ".claude/settings.json")))
      .env,
    { ANTHROPIC_BASE_URL: url },
  );
  assertEquals(
    JSON.parse(Deno.readTextFileSync(oc)).provider.openai.options.baseURL,
    `${url}/v1`,
  );
  // OpenCode's user folder keeps the state (no .opencode there).
  assertOk(isThere(join(xdg, "opencode", "opencode.json.harness-state.json")));
  const found = await checkHooks(home.path, { user: true, xdgConfigHome: xdg });
  assertEquals(
    found.filter((f) => f.check === "gateway").map((f) => [f.host, f.state]),
    [["host_a", "broken"], ["host_c", "broken"]],
  );
  assertEquals(uninstall(user("host_a"), quiet), 0);
  assertEquals(uninstall(user("host_c"), quiet), 0);
  assertEquals(isThere(join(home.path, ".claude")), false);
  assertEquals(Deno.readTextFileSync(oc), ocOriginal);
  assertEquals(names(join(xdg, "opencode")), ["opencode.json", "plugin"]);
});

Deno.test("install --gateway is refused together with --proxy", async () => {
  await using dir = await tempDir();
  const p = await run([
    "install",
    "claude-code",
    "--project",
    dir.path,
    "--gateway",
    "--proxy",
    "fs",
  ]);
  assertEquals(p.code, 2);
  assertOk(/--proxy NAME or --gateway, not both/.test(p.err), p.err);
  assertEquals(names(dir.path), []);
});
