/**
 * `install opencode --gateway`: the anthropic and openai providers in
 * `opencode.json` point at the server (with the token from OpenCode's
 * environment), a provider pointing elsewhere is refused, and uninstall
 * gives the file back byte for byte.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { runMain as run } from "../_cli.ts";
import { install } from "../../lib/cli/cmd_install.ts";
import type { InstallArgs } from "../../lib/cli/install_args.ts";
import { isThere, names, URL_ } from "./_gateway_install.ts";

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

Deno.test("install opencode --gateway on a project whose model is a custom provider says that provider does not go through the gateway, and how to route it", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "opencode.json");
  // The recorded OpenCode sessions' set-up (host_c fixtures).
  Deno.writeTextFileSync(
    file,
    JSON.stringify({
      model: "fake/fake-model",
      small_model: "fake/fake-model",
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: "http://127.0.0.1:42061/v1", apiKey: "fake-key" },
        },
        local: { options: { baseURL: "http://127.0.0.1:11434/v1" } },
      },
    }),
  );
  const r = await run([
    "install",
    "opencode",
    "--project",
    dir.path,
    "--url",
    URL_,
    "--gateway",
  ]);
  assertEquals(r.code, 0, r.err);
  assertOk(
    r.err.includes(
      `this project's model "fake/fake-model" is from provider "fake", which keeps its own base URL (http://127.0.0.1:42061/v1): its model calls do not go through the gateway`,
    ),
    r.err,
  );
  assertOk(
    r.err.includes("--upstream-openai http://127.0.0.1:42061/v1"),
    r.err,
  );
  assertOk(
    r.err.includes(`set provider.fake.options.baseURL to ${URL_}/v1`),
    r.err,
  );
  assertOk(r.err.includes(`small_model "fake/fake-model"`), r.err);
  assertOk(
    r.out.includes(
      `not through the gateway (their own base URLs): provider "local" (http://127.0.0.1:11434/v1)`,
    ),
    r.out,
  );
  // The custom provider is left as it was.
  const c = JSON.parse(Deno.readTextFileSync(file));
  assertEquals(c.provider.fake.options.baseURL, "http://127.0.0.1:42061/v1");
});

Deno.test("install opencode --gateway on a project whose model is an openai one gives no warning", async () => {
  await using dir = await tempDir();
  Deno.writeTextFileSync(
    join(dir.path, "opencode.json"),
    JSON.stringify({ model: "openai/gpt-5.4" }),
  );
  const r = await run([
    "install",
    "opencode",
    "--project",
    dir.path,
    "--url",
    URL_,
    "--gateway",
  ]);
  assertEquals(r.code, 0, r.err);
  assertEquals(r.err.includes("warning"), false, r.err);
  assertOk(r.out.includes("through the harness model gateway"), r.out);
  assertEquals(r.out.includes("names no model"), false, r.out);
});
