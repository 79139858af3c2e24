/**
 * `install claude-code --gateway`: `env.ANTHROPIC_BASE_URL` in the project's
 * Claude Code settings points at the server, a foreign base URL is refused,
 * and uninstall (or a later install without `--gateway`) gives back what was
 * there.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { runMain as run } from "../_cli.ts";
import { isHarnessEntry } from "../../lib/installers/hook_settings.ts";
import { isThere, names, URL_ } from "./_gateway_install.ts";

Deno.test("install claude-code --gateway --capture points env.ANTHROPIC_BASE_URL at the server, keeps the user's env, and uninstall gives the bytes back", async () => {
  await using dir = await tempDir();
  Deno.mkdirSync(join(dir.path, ".claude"));
  const file = join(dir.path, ".claude", "settings.json");
  // The user's own formatting and env entries, a custom header among them.
  const original = `{
    "model": "opus",
    "env": {"FOO": "1", "ANTHROPIC_CUSTOM_HEADERS": "X-Team: blue"},
    "permissions": { "allow": ["Bash(ls)"] }
}`;
  Deno.writeTextFileSync(file, original);
  const install = [
    "install",
    "claude-code",
    "--project",
    dir.path,
    "--url",
    URL_,
    "--gateway",
    "--capture",
    "cap_g1",
  ];
  const r = await run(install);
  assertEquals(r.code, 0, r.err);
  assertOk(
    /through the harness model gateway at http:\/\/127\.0\.0\.1:8848/.test(
      r.out,
    ),
    r.out,
  );
  const s = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(s.env, {
    FOO: "1",
    ANTHROPIC_CUSTOM_HEADERS: "X-Team: blue\nx-harness-capture: cap_g1",
    ANTHROPIC_BASE_URL: URL_,
  });
  assertEquals(s.model, "opus");
  assertEquals(s.permissions, { allow: ["Bash(ls)"] });
  // The hooks are installed as well.
  assertOk(isHarnessEntry(s.hooks.PreToolUse[0].hooks[0], "host_a"));
  // Installing again changes nothing.
  const once = Deno.readTextFileSync(file);
  assertEquals((await run(install)).code, 0);
  assertEquals(Deno.readTextFileSync(file), once);
  // Uninstall with the same arguments: the user's bytes, and nothing else left.
  const u = await run(["uninstall", ...install.slice(1)]);
  assertEquals(u.code, 0, u.err);
  assertEquals(Deno.readTextFileSync(file), original);
  assertEquals(names(join(dir.path, ".claude")), ["settings.json"]);
});

Deno.test("install claude-code --gateway without --capture sets only the base URL; uninstall removes the settings file it created", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, ".claude", "settings.json");
  const args = ["claude-code", "--project", dir.path, "--url", `${URL_}/`];
  assertEquals((await run(["install", ...args, "--gateway"])).code, 0);
  const s = JSON.parse(Deno.readTextFileSync(file));
  // A trailing slash of --url is not kept; no header without a capture.
  assertEquals(s.env, { ANTHROPIC_BASE_URL: URL_ });
  // Plain uninstall (no --gateway) takes the gateway out too: a base URL
  // left pointing at a stopped server would cut the host off its model.
  const u = await run(["uninstall", ...args]);
  assertEquals(u.code, 0, u.err);
  assertEquals(isThere(join(dir.path, ".claude")), false);
});

Deno.test("install claude-code --gateway refuses a foreign ANTHROPIC_BASE_URL, says what to do, and changes nothing", async () => {
  await using dir = await tempDir();
  Deno.mkdirSync(join(dir.path, ".claude"));
  const file = join(dir.path, ".claude", "settings.json");
  const original =
    `{"env": {"ANTHROPIC_BASE_URL": "https://llm-proxy.corp.example"}}\n`;
  Deno.writeTextFileSync(file, original);
  const r = await run([
    "install",
    "claude-code",
    "--project",
    dir.path,
    "--gateway",
  ]);
  assertEquals(r.code, 1, r.out);
  assertOk(r.err.includes('"https://llm-proxy.corp.example"'), r.err);
  assertOk(/cannot forward to yet/.test(r.err), r.err);
  assertOk(/nothing was changed/.test(r.err), r.err);
  assertOk(/remove "env\.ANTHROPIC_BASE_URL"/.test(r.err), r.err);
  assertOk(/install without --gateway/.test(r.err), r.err);
  // Not a byte changed, no backup or state written, no hooks either.
  assertEquals(Deno.readTextFileSync(file), original);
  assertEquals(names(join(dir.path, ".claude")), ["settings.json"]);
});

Deno.test("install claude-code --gateway accepts Anthropic's own URL already set and puts it back on uninstall", async () => {
  await using dir = await tempDir();
  Deno.mkdirSync(join(dir.path, ".claude"));
  const file = join(dir.path, ".claude", "settings.json");
  const original = `{"env":{"ANTHROPIC_BASE_URL":"https://api.anthropic.com"}}`;
  Deno.writeTextFileSync(file, original);
  const args = ["claude-code", "--project", dir.path, "--url", URL_];
  assertEquals((await run(["install", ...args, "--gateway"])).code, 0);
  assertEquals(
    JSON.parse(Deno.readTextFileSync(file)).env.ANTHROPIC_BASE_URL,
    URL_,
  );
  assertEquals((await run(["uninstall", ...args])).code, 0);
  assertEquals(Deno.readTextFileSync(file), original);
});

Deno.test("install claude-code without --gateway after a gateway install takes the gateway out and keeps the hooks; a changed base URL is left alone", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, ".claude", "settings.json");
  const args = ["claude-code", "--project", dir.path, "--url", URL_];
  assertEquals((await run(["install", ...args, "--gateway"])).code, 0);
  const r = await run(["install", ...args]);
  assertEquals(r.code, 0, r.err);
  assertOk(/took the model gateway out/.test(r.out), r.out);
  const s = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(s.env, undefined);
  assertOk(s.hooks.PreToolUse);
  // Gateway again, then the user points the host elsewhere by hand:
  // uninstall takes out the hooks and leaves the user's value.
  assertEquals((await run(["install", ...args, "--gateway"])).code, 0);
  const edited = JSON.parse(Deno.readTextFileSync(file));
  edited.env.ANTHROPIC_BASE_URL = "https://mine.example";
  Deno.writeTextFileSync(file, JSON.stringify(edited, null, 2) + "\n");
  const u = await run(["uninstall", ...args]);
  assertEquals(u.code, 0, u.err);
  assertOk(/left "env\.ANTHROPIC_BASE_URL" .* as it is/.test(u.out), u.out);
  const after = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(after, { env: { ANTHROPIC_BASE_URL: "https://mine.example" } });
});

Deno.test("install claude-code --gateway makes the turn ends http hooks (no transcript read: the gateway records the turns); without --gateway they run the forwarder", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, ".claude", "settings.json");
  const entry = (event: string) => {
    const s = JSON.parse(Deno.readTextFileSync(file));
    return s.hooks[event][0].hooks[0] as {
      type: string;
      url?: string;
      command?: string;
    };
  };
  const base = ["claude-code", "--project", dir.path, "--url", URL_];
  assertEquals((await run(["install", ...base, "--gateway"])).code, 0);
  for (
    const event of [
      "Stop",
      "StopFailure",
      "SubagentStop",
      "PreCompact",
      "SessionEnd",
    ]
  ) {
    assertEquals(
      [entry(event).type, entry(event).url],
      ["http", `${URL_}/hook/host_a`],
      event,
    );
  }
  // SessionStart reaches command hooks only.
  assertEquals(entry("SessionStart").type, "command");
  // Without the gateway the turn ends read the transcript again.
  assertEquals((await run(["install", ...base])).code, 0);
  assertEquals(entry("Stop").type, "command");
  assertOk(
    /ingest\.ts'? hook host_a/.test(entry("Stop").command!),
    entry("Stop").command,
  );
  assertOk(
    entry("Stop").command!.includes("ANTHROPIC_BASE_URL"),
    "the forwarder may read the model base URL",
  );
});
