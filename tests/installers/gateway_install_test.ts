import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { runMain as run } from "../_cli.ts";
import {
  applyGateway,
  claudeGatewayPlan,
  GatewayConflictError,
  opencodeGatewayPlan,
  revertGateway,
} from "../../lib/installers/gateway_settings.ts";
import { isHarnessEntry } from "../../lib/installers/hook_settings.ts";
import { install, uninstall } from "../../lib/cli/cmd_install.ts";
import type { InstallArgs } from "../../lib/cli/install_args.ts";
import { checkHooks } from "../../lib/cli/cmd_doctor.ts";
import { quiet } from "./_quiet.ts";

const URL_ = "http://127.0.0.1:8848";

function names(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch {
    return [];
  }
}

function isThere(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

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

Deno.test("install opencode --gateway points the anthropic and openai providers at <url>/v1, keeps other options and providers, and uninstall gives opencode.json back byte for byte", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "opencode.json");
  // A custom provider as in the recorded OpenCode sessions (host_c
  // fixtures: an openai-compatible "fake" provider with its own baseURL).
  const original = `{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "provider": {
    "anthropic": { "options": { "apiKey": "{env:ANTHROPIC_API_KEY}", "timeout": 60000 } },
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "options": { "baseURL": "http://127.0.0.1:42061/v1", "apiKey": "fake-key" }
    }
  },
  "mcp": { "fs": { "type": "local", "command": ["fs-server"] } }
}
`;
  Deno.writeTextFileSync(file, original);
  const install = [
    "install",
    "opencode",
    "--project",
    dir.path,
    "--url",
    URL_,
    "--gateway",
    "--capture",
    "cap_oc",
  ];
  const r = await run(install);
  assertEquals(r.code, 0, r.err);
  const c = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(c.provider.anthropic.options, {
    apiKey: "{env:ANTHROPIC_API_KEY}",
    timeout: 60000,
    baseURL: `${URL_}/v1`,
    headers: { "x-harness-capture": "cap_oc" },
  });
  assertEquals(c.provider.openai, {
    options: {
      baseURL: `${URL_}/v1`,
      headers: { "x-harness-capture": "cap_oc" },
    },
  });
  assertEquals(c.provider.fake.options.baseURL, "http://127.0.0.1:42061/v1");
  assertEquals(c.mcp, { fs: { type: "local", command: ["fs-server"] } });
  assertEquals(c.model, "anthropic/claude-sonnet-4-5");
  // The plugin is installed as before; state and backup stay in .opencode/.
  assertOk(isThere(join(dir.path, ".opencode", "plugin", "harness.js")));
  assertEquals(names(dir.path), [".opencode", "opencode.json"]);
  const kept = names(join(dir.path, ".opencode"));
  assertOk(kept.includes("opencode.json.harness-state.json"), kept.join());
  assertOk(kept.some((n) => n.startsWith("opencode.json.harness-backup-")));
  // Again: nothing changes.
  const once = Deno.readTextFileSync(file);
  assertEquals((await run(install)).code, 0);
  assertEquals(Deno.readTextFileSync(file), once);
  const u = await run(["uninstall", ...install.slice(1)]);
  assertEquals(u.code, 0, u.err);
  assertEquals(Deno.readTextFileSync(file), original);
  assertEquals(names(join(dir.path, ".opencode")), ["plugin"]);
  assertEquals(names(join(dir.path, ".opencode", "plugin")), []);
});

Deno.test("install opencode --gateway creates opencode.json when there is none, and uninstall removes it", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "opencode.json");
  const args = ["opencode", "--project", dir.path, "--url", URL_];
  assertEquals((await run(["install", ...args, "--gateway"])).code, 0);
  assertEquals(JSON.parse(Deno.readTextFileSync(file)), {
    provider: {
      anthropic: { options: { baseURL: `${URL_}/v1` } },
      openai: { options: { baseURL: `${URL_}/v1` } },
    },
  });
  // Installing again without --gateway takes it out (the file it made goes).
  const again = await run(["install", ...args]);
  assertEquals(again.code, 0, again.err);
  assertEquals(isThere(file), false);
  assertOk(isThere(join(dir.path, ".opencode", "plugin", "harness.js")));
  assertEquals((await run(["install", ...args, "--gateway"])).code, 0);
  assertEquals((await run(["uninstall", ...args])).code, 0);
  assertEquals(isThere(file), false);
  assertEquals(
    names(join(dir.path, ".opencode")).filter((n) => n !== "plugin"),
    [],
  );
});

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

Deno.test("install opencode --gateway refuses a provider whose baseURL points elsewhere, before writing anything", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "opencode.json");
  const original =
    `{"provider":{"openai":{"options":{"baseURL":"https://gw.corp.example/v1"}}}}`;
  Deno.writeTextFileSync(file, original);
  const r = await run([
    "install",
    "opencode",
    "--project",
    dir.path,
    "--gateway",
  ]);
  assertEquals(r.code, 1, r.out);
  assertOk(/"provider\.openai\.options\.baseURL"/.test(r.err), r.err);
  assertOk(r.err.includes("https://gw.corp.example/v1"), r.err);
  assertEquals(Deno.readTextFileSync(file), original);
  // Not even the plugin: a refusal leaves the folder as it was.
  assertEquals(names(dir.path), ["opencode.json"]);
});

Deno.test("install --gateway is refused for gemini-cli and together with --proxy", async () => {
  await using dir = await tempDir();
  const r = await run([
    "install",
    "gemini-cli",
    "--project",
    dir.path,
    "--gateway",
  ]);
  assertEquals(r.code, 2);
  assertOk(
    /--gateway is for claude-code and opencode, not gemini-cli/.test(
      r.err,
    ),
    r.err,
  );
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

Deno.test("applyGateway() and revertGateway() round-trip: created objects go, earlier values come back, key order is kept", () => {
  const settings = {
    env: { ANTHROPIC_CUSTOM_HEADERS: "A: 1\nx-harness-capture: old", Z: "z" },
    other: [1, 2],
  };
  const plan = claudeGatewayPlan(settings, { url: URL_, capture: "c2" });
  const { settings: on, record } = applyGateway(settings, plan);
  assertEquals(
    (on.env as Record<string, string>).ANTHROPIC_CUSTOM_HEADERS,
    "A: 1\nx-harness-capture: c2",
  );
  const { settings: off, kept } = revertGateway(on, record);
  assertEquals(kept, []);
  assertEquals(JSON.stringify(off), JSON.stringify(settings));
  // OpenCode: every object on the way is created, and removed again.
  const oc = applyGateway({ theme: "x" }, opencodeGatewayPlan({ url: URL_ }));
  assertEquals(oc.record.created, [
    ["provider"],
    ["provider", "anthropic"],
    ["provider", "anthropic", "options"],
    ["provider", "openai"],
    ["provider", "openai", "options"],
  ]);
  assertEquals(revertGateway(oc.settings, oc.record).settings, { theme: "x" });
  // A base URL set elsewhere is a typed refusal naming the key.
  let err: unknown;
  try {
    applyGateway(
      { provider: { anthropic: { options: { baseURL: "http://other/v1" } } } },
      opencodeGatewayPlan({ url: URL_ }),
    );
  } catch (e) {
    err = e;
  }
  assertOk(err instanceof GatewayConflictError);
  assertEquals(err.path, ["provider", "anthropic", "options", "baseURL"]);
  // A key on the way that is not an object is refused, not overwritten.
  let typeErr = "";
  try {
    applyGateway({ env: "x" }, claudeGatewayPlan({}, { url: URL_ }));
  } catch (e) {
    typeErr = (e as Error).message;
  }
  assertOk(/"env" is not an object; fix it by hand/.test(typeErr), typeErr);
});

Deno.test("install opencode --gateway with a token server sends the token from OpenCode's environment, never writing it", async () => {
  await using dir = await tempDir();
  const a: InstallArgs = {
    host: "host_c",
    project: dir.path,
    user: false,
    mode: "http",
    url: URL_,
    token: true,
    forwarderCommand: `'/usr/bin/deno' run '/x/ingest.ts' hook host_c`,
    gateway: true,
  };
  let out = "";
  assertEquals(install(a, { out: (t) => out += t + "\n", err: () => {} }), 0);
  const c = JSON.parse(
    Deno.readTextFileSync(join(dir.path, "opencode.json")),
  );
  for (const id of ["anthropic", "openai"]) {
    assertEquals(c.provider[id].options.headers, {
      "x-harness-token": "{env:HARNESS_INGEST_TOKEN}",
    });
  }
  assertOk(/start OpenCode where that is set/.test(out), out);
  // Claude Code's settings take no token: install says how to send it.
  out = "";
  assertEquals(
    install({ ...a, host: "host_a", forwarderCommand: "x hook host_a" }, {
      out: (t) => out += t + "\n",
      err: () => {},
    }),
    0,
  );
  assertOk(/x-harness-token: <token>.*settings\.local\.json/.test(out), out);
  const s = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".claude", "settings.json")),
  );
  assertEquals(s.env, { ANTHROPIC_BASE_URL: URL_ });
});
