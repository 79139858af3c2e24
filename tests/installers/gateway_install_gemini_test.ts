/**
 * `install gemini-cli --gateway`: `GOOGLE_GEMINI_BASE_URL` in the env file
 * Gemini CLI reads for the project (created as `.gemini/.env` only when it
 * would read none: a new one would hide the user's `~/.gemini/.env`), the
 * hooks without the model's side (the gateway's), a different base URL
 * refused (in the file or exported), Login-with-Google said, and uninstall
 * (or an install without `--gateway`) gives back exactly what was there.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { install, uninstall } from "../../lib/cli/cmd_install.ts";
import { checkHooks } from "../../lib/cli/cmd_doctor.ts";
import { startServer } from "../_server.ts";
import type { InstallArgs } from "../../lib/cli/install_args.ts";
import {
  geminiEnvFile,
  parseEnvFile,
  pointEnvText,
  unpointEnvText,
} from "../../lib/installers/gemini_env.ts";
import { isThere, names, URL_ } from "./_gateway_install.ts";

function args(
  project: string,
  home: string,
  more: Partial<InstallArgs> = {},
): InstallArgs {
  return {
    host: "host_b",
    project,
    user: false,
    home,
    mode: "http",
    url: URL_,
    forwarderCommand: `'/usr/bin/deno' run '/x/ingest.ts' hook host_b`,
    gateway: true,
    ...more,
  };
}

function said(): {
  out: string[];
  err: string[];
  io: { out: (t: string) => void; err: (t: string) => void };
} {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t) => out.push(t), err: (t) => err.push(t) } };
}

function events(settingsFile: string): string[] {
  return Object.keys(JSON.parse(Deno.readTextFileSync(settingsFile)).hooks);
}

async function dirs() {
  const root = await tempDir();
  const project = join(root.path, "work", "proj");
  const home = join(root.path, "home");
  Deno.mkdirSync(project, { recursive: true });
  Deno.mkdirSync(home, { recursive: true });
  return { root, project, home };
}

Deno.test("install gemini-cli --gateway --capture: a new .gemini/.env when Gemini CLI reads none; hooks without the model's side; uninstall leaves nothing", async () => {
  const { root, project, home } = await dirs();
  await using _ = root;
  const s = said();
  assertEquals(install(args(project, home, { capture: "cap_g1" }), s.io), 0);
  const env = join(project, ".gemini", ".env");
  assertEquals(
    Deno.readTextFileSync(env),
    `GOOGLE_GEMINI_BASE_URL=${URL_}\nGEMINI_CLI_CUSTOM_HEADERS="x-harness-capture: cap_g1"\n`,
  );
  assertEquals(parseEnvFile(Deno.readTextFileSync(env)), {
    GOOGLE_GEMINI_BASE_URL: URL_,
    GEMINI_CLI_CUSTOM_HEADERS: "x-harness-capture: cap_g1",
  });
  assertEquals(
    geminiEnvFile({ dir: project, home, exists: isThere }),
    env,
    "the file Gemini CLI reads",
  );
  const settings = join(project, ".gemini", "settings.json");
  const hooks = events(settings);
  assertOk(hooks.includes("BeforeAgent") && hooks.includes("AfterTool"));
  assertEquals(
    hooks.filter((e) => e === "BeforeToolSelection" || e === "AfterModel"),
    [],
    "the model's side is the gateway's",
  );
  assertOk(
    s.out.some((l) =>
      l.includes("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8848")
    ),
    s.out.join("\n"),
  );
  assertEquals(s.err, []);
  // Installing again changes nothing.
  const once = Deno.readTextFileSync(env);
  assertEquals(
    install(args(project, home, { capture: "cap_g1" }), said().io),
    0,
  );
  assertEquals(Deno.readTextFileSync(env), once);
  // Without --gateway: the gateway goes, the hooks get the model's side back.
  assertEquals(install(args(project, home, { gateway: false }), said().io), 0);
  assertEquals(isThere(env), false, "the env file install created is gone");
  assertOk(events(settings).includes("AfterModel"));
  assertEquals(
    install(args(project, home, { capture: "cap_g1" }), said().io),
    0,
  );
  assertEquals(uninstall(args(project, home), said().io), 0);
  assertEquals(names(project), [], "nothing of the install is left");
});

Deno.test("install gemini-cli --gateway edits the project's own .env in place, and uninstall gives its bytes back", async () => {
  const { root, project, home } = await dirs();
  await using _ = root;
  const file = join(project, ".env");
  const original =
    "# my app\nGEMINI_API_KEY='AIza-secret' # mine\nDEBUG=1\nGEMINI_CLI_CUSTOM_HEADERS=X-Team: blue\n";
  Deno.writeTextFileSync(file, original);
  assertEquals(install(args(project, home, { capture: "c2" }), said().io), 0);
  const after = Deno.readTextFileSync(file);
  assertOk(
    after.startsWith(
      "# my app\nGEMINI_API_KEY='AIza-secret' # mine\nDEBUG=1\n",
    ),
    after,
  );
  assertEquals(
    parseEnvFile(after).GEMINI_CLI_CUSTOM_HEADERS,
    "X-Team: blue, x-harness-capture: c2",
  );
  assertEquals(parseEnvFile(after).GOOGLE_GEMINI_BASE_URL, URL_);
  assertEquals(
    isThere(join(project, ".gemini", ".env")),
    false,
    "no second file that would hide it",
  );
  // A .gemini/.env made since hides it: doctor says so, naming both.
  Deno.writeTextFileSync(join(project, ".gemini", ".env"), "X=1\n");
  const f = (await checkHooks(project, {
    env: (n) => n === "HOME" ? home : undefined,
  })).find((f) => f.host === "host_b" && f.check === "gateway");
  assertEquals(f?.state, "broken");
  assertOk(
    f!.detail.includes(
      `it reads ${join(project, ".gemini", ".env")}, not ${file}`,
    ),
    f!.detail,
  );
  Deno.removeSync(join(project, ".gemini", ".env"));
  assertEquals(uninstall(args(project, home), said().io), 0);
  assertEquals(Deno.readTextFileSync(file), original);
  assertEquals(names(project), [".env"]);
});

Deno.test("install gemini-cli --gateway refuses a project file that would hide the user's ~/.gemini/.env, and names it", async () => {
  const { root, project, home } = await dirs();
  await using _ = root;
  Deno.mkdirSync(join(home, ".gemini"));
  Deno.writeTextFileSync(
    join(home, ".gemini", ".env"),
    "GEMINI_API_KEY=AIza-secret\n",
  );
  let message = "";
  try {
    install(args(project, home), said().io);
  } catch (err) {
    message = (err as Error).message;
  }
  assertOk(message.includes(join(home, ".gemini", ".env")), message);
  assertOk(/would hide it/.test(message) && /--user/.test(message), message);
  assertEquals(names(project), [], "nothing was written");
  // --user edits that file.
  const user = { ...args(project, home), user: true, project: undefined };
  assertEquals(install(user, said().io), 0);
  assertEquals(
    parseEnvFile(Deno.readTextFileSync(join(home, ".gemini", ".env"))),
    {
      GEMINI_API_KEY: "AIza-secret",
      GOOGLE_GEMINI_BASE_URL: URL_,
    },
  );
  assertEquals(uninstall(user, said().io), 0);
  assertEquals(
    Deno.readTextFileSync(join(home, ".gemini", ".env")),
    "GEMINI_API_KEY=AIza-secret\n",
  );
  assertEquals(names(join(home, ".gemini")), [".env"]);
});

Deno.test("install gemini-cli --gateway: a different base URL is refused, naming it; Google's own is not in the way and comes back", async () => {
  const { root, project, home } = await dirs();
  await using _ = root;
  Deno.mkdirSync(join(project, ".gemini"));
  const file = join(project, ".gemini", ".env");
  Deno.writeTextFileSync(
    file,
    "GOOGLE_GEMINI_BASE_URL=https://proxy.corp.example/gemini\n",
  );
  let message = "";
  try {
    install(args(project, home), said().io);
  } catch (err) {
    message = (err as Error).message;
  }
  assertOk(
    message.includes('"https://proxy.corp.example/gemini"') &&
      message.includes(file),
    message,
  );
  assertEquals(
    names(join(project, ".gemini")),
    [".env"],
    "nothing was written",
  );
  const google =
    "GOOGLE_GEMINI_BASE_URL=https://generativelanguage.googleapis.com\n";
  Deno.writeTextFileSync(file, google);
  assertEquals(install(args(project, home), said().io), 0);
  assertEquals(
    parseEnvFile(Deno.readTextFileSync(file)).GOOGLE_GEMINI_BASE_URL,
    URL_,
  );
  assertEquals(uninstall(args(project, home), said().io), 0);
  assertEquals(Deno.readTextFileSync(file), google);
  // Exported in the shell, a different one wins over any file: refused.
  Deno.env.set("GOOGLE_GEMINI_BASE_URL", "http://other-gateway:4000");
  try {
    let m = "";
    try {
      install(args(project, home), said().io);
    } catch (err) {
      m = (err as Error).message;
    }
    assertOk(/exported as "http:\/\/other-gateway:4000"/.test(m), m);
  } finally {
    Deno.env.delete("GOOGLE_GEMINI_BASE_URL");
  }
  assertEquals(Deno.readTextFileSync(file), google);
});

Deno.test("install gemini-cli --gateway says so when Gemini CLI signs in with Google (the base URL moves nothing), and a token is not written", async () => {
  const { root, project, home } = await dirs();
  await using _ = root;
  Deno.mkdirSync(join(home, ".gemini"));
  Deno.writeTextFileSync(
    join(home, ".gemini", "settings.json"),
    JSON.stringify({ security: { auth: { selectedType: "oauth-personal" } } }),
  );
  const s = said();
  assertEquals(install(args(project, home, { token: true }), s.io), 0);
  assertOk(
    s.err.some((l) =>
      /signs in with oauth-personal/.test(l) && /records none of them/.test(l)
    ),
    s.err.join("\n"),
  );
  assertOk(
    s.out.some((l) =>
      /export GEMINI_CLI_CUSTOM_HEADERS="x-harness-token: <token>"/.test(l)
    ),
    s.out.join("\n"),
  );
  assertEquals(
    /token/i.test(Deno.readTextFileSync(join(project, ".gemini", ".env"))),
    false,
  );
  assertEquals(uninstall(args(project, home), said().io), 0);
});

Deno.test("gemini env files: pointing and unpointing keeps every other line and gives the bytes back", () => {
  const mine =
    "A=1\r\nexport GOOGLE_GEMINI_BASE_URL='https://generativelanguage.googleapis.com'\n# C=3\nGEMINI_CLI_CUSTOM_HEADERS='X-A: 1' # team\n";
  const { text, edit } = pointEnvText(mine, { base_url: URL_, capture: "c 1" });
  assertEquals(parseEnvFile(text), {
    A: "1",
    GOOGLE_GEMINI_BASE_URL: URL_,
    GEMINI_CLI_CUSTOM_HEADERS: "X-A: 1, x-harness-capture: c 1",
  });
  assertEquals(unpointEnvText(text, edit), { text: mine, kept: [] });
  const fresh = pointEnvText(null, { base_url: URL_ });
  assertEquals(fresh.text, `GOOGLE_GEMINI_BASE_URL=${URL_}\n`);
  assertEquals(unpointEnvText(fresh.text, fresh.edit).text, "");
  // A line changed since the install is left.
  const changed = fresh.text.replace(URL_, "http://elsewhere:1");
  assertEquals(unpointEnvText(changed, fresh.edit), {
    text: changed,
    kept: ["GOOGLE_GEMINI_BASE_URL"],
  });
});

Deno.test("doctor on a gemini-cli gateway install: no server, a nearer env file, the line gone, and what to check while no call arrives", async () => {
  const { root, project, home } = await dirs();
  await using _ = root;
  const env = (name: string) => name === "HOME" ? home : undefined;
  const dead = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closed = `http://127.0.0.1:${(dead.addr as Deno.NetAddr).port}`;
  dead.close();
  assertEquals(install(args(project, home, { url: closed }), said().io), 0);
  const gatewayOf = async () =>
    (await checkHooks(project, { env })).find((f) =>
      f.host === "host_b" && f.check === "gateway"
    );
  const down = await gatewayOf();
  assertEquals(down?.state, "broken");
  assertOk(/no server answers at/.test(down!.detail), down!.detail);
  await using srv = await startServer();
  assertEquals(install(args(project, home, { url: srv.url }), said().io), 0);
  const waiting = await gatewayOf();
  assertEquals(waiting?.state, "waiting", waiting?.detail);
  assertOk(/trusted folder/.test(waiting!.detail), waiting!.detail);
  Deno.mkdirSync(join(home, ".gemini"));
  Deno.writeTextFileSync(
    join(home, ".gemini", "settings.json"),
    JSON.stringify({ security: { auth: { selectedType: "oauth-personal" } } }),
  );
  assertOk(
    /signs in with oauth-personal/.test((await gatewayOf())!.detail),
    "Login with Google is named",
  );
  const file = join(project, ".gemini", ".env");
  const text = Deno.readTextFileSync(file);
  Deno.writeTextFileSync(file, "");
  assertEquals((await gatewayOf())?.state, "absent");
  Deno.writeTextFileSync(file, text);
  // The install's file moved away, another one read instead.
  Deno.renameSync(file, join(project, "moved.env"));
  Deno.writeTextFileSync(join(home, ".gemini", ".env"), "GEMINI_API_KEY=k\n");
  const moved = await gatewayOf();
  assertEquals(moved?.state, "absent", moved?.detail);
  Deno.renameSync(join(project, "moved.env"), file);
  assertEquals((await gatewayOf())?.state, "waiting");
  assertEquals(uninstall(args(project, home), said().io), 0);
  assertEquals(await gatewayOf(), undefined);
});
