import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { runMain as run } from "../_cli.ts";
import {
  inPackageCache,
  shellLauncher,
} from "../../lib/installers/hook_command.ts";

Deno.test("inPackageCache() tells npx's and npm's caches from installed Denos", () => {
  for (
    const cached of [
      "/root/.npm/_npx/7a40be787520bede/node_modules/deno/deno",
      "/home/me/.npm/_npx/0123/node_modules/.bin/deno",
      "/home/me/.cache/deno/bin/deno",
    ]
  ) assertEquals(inPackageCache(cached), true, cached);
  for (
    const stable of [
      "/usr/local/lib/node_modules/deno/deno", // npm install -g deno
      "/tmp/x/lib/node_modules/deno/deno", // npm install -g --prefix /tmp/x
      "/home/me/.deno/bin/deno", // the install script
      "/usr/bin/deno",
    ]
  ) assertEquals(inPackageCache(stable), false, stable);
});

Deno.test("shellLauncher() gives npx's command to a Node-only user and deno to the others", () => {
  assertEquals(
    shellLauncher("/root/.npm/_npx/7a40/node_modules/deno/deno", "2.9.6"),
    "npx -y deno@2.9.6",
  );
  assertEquals(
    shellLauncher("/usr/local/lib/node_modules/deno/deno", "2.9.6"),
    "deno",
  );
});

Deno.test("the demo's closing hint names a Deno the user's shell has", async () => {
  await using dir = await tempDir();
  const r = await run(["demo", "--root", join(dir.path, "store")]);
  assertEquals(r.code, 0, r.err);
  const hint = r.out.trimEnd().split("\n").at(-1) ?? "";
  const launcher = shellLauncher(Deno.execPath(), Deno.version.deno);
  assertOk(
    hint.startsWith(`Explain the package: ${launcher} task compile explain `),
    hint,
  );
  assertOk(
    inPackageCache(Deno.execPath()) === hint.includes("npx -y deno@"),
    hint,
  );
});
