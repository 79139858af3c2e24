import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { install, uninstall } from "../../lib/cli/cmd_install.ts";
import type { InstallArgs } from "../../lib/cli/install_args.ts";
import {
  HOST_A_TRANSCRIPT_EVENTS,
  isHarnessEntry,
} from "../../lib/installers/hook_settings.ts";
import { tempDir } from "../_helpers.ts";
import { quiet } from "./_quiet.ts";

function args(
  host: string,
  project: string,
  extra: Partial<InstallArgs> = {},
): InstallArgs {
  return {
    host,
    project,
    user: false,
    mode: "http",
    url: "http://127.0.0.1:8848",
    forwarderCommand: `'/usr/bin/deno' run --quiet '/x/ingest.ts' hook ${host}`,
    ...extra,
  };
}

Deno.test("install host_a writes http hooks plus a SessionStart command hook, merging with existing settings", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, ".claude", "settings.json");
  Deno.mkdirSync(join(dir.path, ".claude"));
  const original = JSON.stringify(
    {
      model: "x",
      hooks: {
        PreToolUse: [{
          matcher: "Bash",
          hooks: [{ type: "command", command: "mine.sh" }],
        }],
      },
    },
    null,
    4,
  );
  Deno.writeTextFileSync(file, original);
  assertEquals(install(args("host_a", dir.path), quiet), 0);
  const s = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(s.model, "x");
  assertEquals(s.hooks.PreToolUse.length, 2);
  assertEquals(s.hooks.PreToolUse[0].hooks[0].command, "mine.sh");
  assertEquals(s.hooks.PreToolUse[1], {
    matcher: "*",
    hooks: [{
      type: "http",
      url: "http://127.0.0.1:8848/hook/host_a",
      timeout: 1,
    }],
  });
  assertEquals(s.hooks.SessionStart[0].hooks[0].type, "command");
  assertOk(isHarnessEntry(s.hooks.SessionStart[0].hooks[0], "host_a"));
  const backups = [...Deno.readDirSync(join(dir.path, ".claude"))].filter((e) =>
    e.name.includes("harness-backup")
  );
  assertEquals(backups.length, 1);
  // Idempotent: a second install changes nothing.
  const once = Deno.readTextFileSync(file);
  install(args("host_a", dir.path), quiet);
  assertEquals(Deno.readTextFileSync(file), once);
  // Uninstall gives back the original bytes.
  assertEquals(uninstall(args("host_a", dir.path), quiet), 0);
  assertEquals(Deno.readTextFileSync(file), original);
});

Deno.test("install --command uses the forwarder everywhere; --capture pins cap in http URLs", async () => {
  await using dir = await tempDir();
  install(args("host_a", dir.path, { mode: "command" }), quiet);
  const s = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".claude/settings.json")),
  );
  for (
    const groups of Object.values(s.hooks) as { hooks: { type: string }[] }[][]
  ) {
    assertEquals(groups[0].hooks[0].type, "command");
  }
  await using dir2 = await tempDir();
  install(args("host_a", dir2.path, { capture: "cap_x" }), quiet);
  const s2 = JSON.parse(
    Deno.readTextFileSync(join(dir2.path, ".claude/settings.json")),
  );
  assertEquals(
    s2.hooks.PostToolUse[0].hooks[0].url,
    "http://127.0.0.1:8848/hook/host_a?cap=cap_x",
  );
  // The transcript events run the forwarder even in http mode: it reads
  // the transcript the host names; the server never opens one.
  for (
    const event of [
      "Stop",
      "StopFailure",
      "SubagentStop",
      "PreCompact",
      "SessionEnd",
    ]
  ) {
    assertEquals(s2.hooks[event][0].hooks[0].type, "command", event);
  }
  assertEquals(s2.hooks.PostCompact[0].hooks[0].type, "http");
});

Deno.test("install host_b writes command hooks; uninstall removes the file it created", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, ".gemini/settings.json");
  install(args("host_b", dir.path), quiet);
  const s = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(Object.keys(s.hooks).sort(), [
    "AfterAgent",
    "AfterModel",
    "AfterTool",
    "BeforeAgent",
    "BeforeTool",
    "BeforeToolSelection",
    "Notification",
    "PreCompress",
    "SessionEnd",
    "SessionStart",
  ]);
  assertEquals(s.hooks.BeforeTool[0].hooks[0].timeout, 10_000);
  uninstall(args("host_b", dir.path), quiet);
  let exists = true;
  try {
    Deno.statSync(file);
  } catch {
    exists = false;
  }
  assertEquals(exists, false);
});

Deno.test("install host_c writes the plugin file; uninstall removes only that", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, ".opencode/plugin/harness.js");
  install(args("host_c", dir.path), quiet);
  const text = Deno.readTextFileSync(file);
  assertOk(text.includes("harness.host_c-hook.v1"));
  assertOk(text.includes('"http://127.0.0.1:8848"'));
  uninstall(args("host_c", dir.path), quiet);
  let exists = true;
  try {
    Deno.statSync(file);
  } catch {
    exists = false;
  }
  assertEquals(exists, false);
});

Deno.test("install refuses settings that are not JSON and leaves them untouched", async () => {
  await using dir = await tempDir();
  Deno.mkdirSync(join(dir.path, ".claude"));
  const file = join(dir.path, ".claude/settings.json");
  Deno.writeTextFileSync(file, "{ broken");
  let msg = "";
  try {
    install(args("host_a", dir.path), quiet);
  } catch (e) {
    msg = (e as Error).message;
  }
  assertOk(/not valid JSON/.test(msg));
  assertEquals(Deno.readTextFileSync(file), "{ broken");
});

Deno.test("install --user writes the user-level files under HOME and XDG_CONFIG_HOME", async () => {
  await using home = await tempDir();
  const user = (host: string) =>
    args(host, "", {
      user: true,
      home: home.path,
      xdgConfigHome: join(home.path, "xdg"),
    });
  assertEquals(install(user("host_a"), quiet), 0);
  assertOk(Deno.statSync(join(home.path, ".claude/settings.json")).isFile);
  assertEquals(install(user("host_c"), quiet), 0);
  assertOk(
    Deno.statSync(join(home.path, "xdg/opencode/plugin/harness.js")).isFile,
  );
  assertEquals(uninstall(user("host_a"), quiet), 0);
  let exists = true;
  try {
    Deno.statSync(join(home.path, ".claude/settings.json"));
  } catch {
    exists = false;
  }
  assertEquals(exists, false);
});

Deno.test("install --capture reaches every hook and the plugin, and a bad capture id is refused at install", async () => {
  const { main } = await import("../../ingest.ts");
  await using dir = await tempDir();
  assertEquals(
    await main([
      "install",
      "claude-code",
      "--project",
      dir.path,
      "--capture",
      "pin_2",
    ], quiet),
    0,
  );
  const a = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".claude/settings.json")),
  );
  assertOk(
    (a.hooks.SessionStart[0].hooks[0].command as string).includes(
      "--capture 'pin_2'",
    ),
  );
  assertOk(
    (a.hooks.PreToolUse[0].hooks[0].url as string).endsWith("?cap=pin_2"),
  );
  assertEquals(
    await main([
      "install",
      "opencode",
      "--project",
      dir.path,
      "--capture",
      "pin_2",
    ], quiet),
    0,
  );
  assertOk(
    Deno.readTextFileSync(join(dir.path, ".opencode/plugin/harness.js"))
      .includes('const PINNED_CAPTURE = "pin_2";'),
  );
  let err = "";
  const code = await main(
    ["install", "host_b", "--project", dir.path, "--capture", "my run #1"],
    { out: () => {}, err: (t) => err += t },
  );
  assertEquals(code, 2);
  assertOk(/--capture "my run #1"/.test(err), err);
  let exists = true;
  try {
    Deno.statSync(join(dir.path, ".gemini/settings.json"));
  } catch {
    exists = false;
  }
  assertEquals(exists, false);
});

Deno.test("host_b settings with comments install and uninstall; uninstall gives the user's bytes back and removes what install created", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, ".gemini", "settings.json");
  // A folder install creates is removed by uninstall, backups included.
  assertEquals(install(args("host_b", dir.path), quiet), 0);
  assertEquals(install(args("host_b", dir.path), quiet), 0);
  assertEquals(uninstall(args("host_b", dir.path), quiet), 0);
  let left = true;
  try {
    Deno.statSync(join(dir.path, ".gemini"));
  } catch {
    left = false;
  }
  assertEquals(left, false, "the .gemini folder install created is gone");
  // JSONC: comments and a trailing comma.
  Deno.mkdirSync(join(dir.path, ".gemini"));
  const original = `{
  // my theme
  "theme": "dark", /* keep */
  "tools": { "sandbox": false, },
}
`;
  Deno.writeTextFileSync(file, original);
  assertEquals(install(args("host_b", dir.path), quiet), 0);
  const merged = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(merged.theme, "dark");
  assertOk(merged.hooks.BeforeTool);
  assertEquals(uninstall(args("host_b", dir.path), quiet), 0);
  assertEquals(Deno.readTextFileSync(file), original);
  assertEquals(
    [...Deno.readDirSync(join(dir.path, ".gemini"))].map((e) => e.name),
    ["settings.json"],
  );
});

Deno.test("install puts the hook client on every command hook except host_a's transcript events, which run the forwarder", async () => {
  await using dir = await tempDir();
  const client = (host: string) =>
    `sh '/x/lib/forwarder/hook_client.sh' '/usr/bin/deno' run --quiet '/x/ingest.ts' hook ${host}`;
  install(
    args("host_a", dir.path, {
      mode: "command",
      clientCommand: client("host_a"),
    }),
    quiet,
  );
  const a = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".claude/settings.json")),
  );
  for (const [event, groups] of Object.entries(a.hooks)) {
    const entry = (groups as { hooks: { command: string }[] }[])[0].hooks[0];
    const transcript = HOST_A_TRANSCRIPT_EVENTS.has(event);
    assertEquals(entry.command.startsWith("sh "), !transcript, event);
    assertOk(isHarnessEntry(entry, "host_a"), event);
  }
  install(args("host_b", dir.path, { clientCommand: client("host_b") }), quiet);
  const b = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".gemini/settings.json")),
  );
  assertEquals(b.hooks.AfterTool[0].hooks[0].command, client("host_b"));
  // Uninstall still takes out exactly these entries.
  uninstall(args("host_b", dir.path), quiet);
  uninstall(args("host_a", dir.path), quiet);
  assertEquals([...Deno.readDirSync(dir.path)].map((e) => e.name), []);
});

Deno.test("every installed hook time-out is above 5x our own worst case (the forwarder's start plus its own server time-out)", async () => {
  const { HOST_A_COMMAND_TIMEOUT_S, HOST_A_HTTP_TIMEOUT_S, HOST_B_TIMEOUT_MS } =
    await import("../../lib/installers/hook_settings.ts");
  const { DEFAULT_HOOK_TIMEOUT_MS } = await import(
    "../../lib/forwarder/forward.ts"
  );
  // The forwarder's worst p99 measured (bench hooks, load average 12 on 2
  // cores: 806 ms) is a start plus at most its own server time-out.
  const forwarderWorst = 550 + DEFAULT_HOOK_TIMEOUT_MS;
  assertOk(HOST_B_TIMEOUT_MS > 5 * forwarderWorst, `${HOST_B_TIMEOUT_MS}`);
  assertOk(HOST_A_COMMAND_TIMEOUT_S * 1000 > 5 * forwarderWorst);
  // An http hook is the server's own answer, which gives up at nothing
  // shorter than the forwarder would.
  assertOk(HOST_A_HTTP_TIMEOUT_S * 1000 > 5 * 100);
});
