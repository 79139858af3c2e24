import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { runMain as run } from "../_cli.ts";
import { startServer } from "../_server.ts";
import { CaptureCoordinator } from "../../lib/control/coordinator.ts";

type Finding = { host: string; state: string; detail: string };

Deno.test("doctor exits 1 and names the token when the server requires one the hooks do not send (every event would get 401)", async () => {
  await using srv = await startServer({ token: "s3cret-token" });
  await using dir = await tempDir();
  for (const host of ["host_a", "host_b"]) {
    const r = await run([
      "install",
      host,
      "--project",
      dir.path,
      "--url",
      srv.url,
    ]);
    assertEquals(r.code, 0, r.err);
  }
  const r = await run(["doctor", "--project", dir.path, "--json"]);
  assertEquals(r.code, 1, r.out);
  const f = JSON.parse(r.out) as Finding[];
  for (const host of ["host_a", "host_b"]) {
    const x = f.find((x) => x.host === host)!;
    assertEquals(x.state, "broken", JSON.stringify(x));
    assertOk(/requires a bearer token .* 401/.test(x.detail), x.detail);
    assertOk(!x.detail.includes("s3cret-token"), x.detail);
  }
  // The server recorded none of the probes.
  assertEquals(srv.store.listCaptures().length, 0);
});

Deno.test("doctor exits 1 when the hooks are pinned to a finished capture (the server answers ok:false to every event)", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const coord = new CaptureCoordinator(srv.store);
  coord.startCapture({ id: "done_1" });
  coord.finishCapture("done_1");
  const install = await run([
    "install",
    "host_b",
    "--project",
    dir.path,
    "--url",
    srv.url,
    "--capture",
    "done_1",
  ]);
  assertEquals(install.code, 0, install.err);
  const r = await run(["doctor", "--project", dir.path]);
  assertEquals(r.code, 1, r.out);
  assertOk(
    /gemini-cli\s+broken\s+the hooks are pinned to capture "done_1", which is finished/
      .test(r.out),
    r.out,
  );
  assertOk(!/can record/.test(r.out.split("\n")[1] ?? ""), r.out);
  // Pinned to an open capture, the same hooks can record.
  coord.startCapture({ id: "open_1" });
  const again = await run([
    "install",
    "host_b",
    "--project",
    dir.path,
    "--url",
    srv.url,
    "--capture",
    "open_1",
  ]);
  assertEquals(again.code, 0, again.err);
  const ok = await run(["doctor", "--project", dir.path, "--json"]);
  const f = JSON.parse(ok.out) as Finding[];
  assertEquals(f.find((x) => x.host === "host_b")?.state, "ok", ok.out);
});

/** Put `from` at `to`: a hard link when the file system allows, else a copy. */
function placeDeno(from: string, to: string): void {
  try {
    Deno.linkSync(from, to);
  } catch {
    Deno.copyFileSync(from, to);
    Deno.chmodSync(to, 0o755);
  }
}

/** Run `ingest.ts install host_b` with the given Deno and nothing but `bin` on PATH. */
async function installWith(deno: string, bin: string, project: string) {
  const ingest = new URL("../../ingest.ts", import.meta.url).pathname;
  const r = await new Deno.Command(deno, {
    args: [
      "run",
      "--allow-read",
      `--allow-write=${project}`,
      "--allow-env",
      "--allow-run=deno",
      ingest,
      "install",
      "host_b",
      "--project",
      project,
    ],
    env: { PATH: bin, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: r.code,
    err: new TextDecoder().decode(r.stderr),
    settings: Deno.readTextFileSync(join(project, ".gemini", "settings.json")),
  };
}

Deno.test({
  name:
    "install warns when deno is not on PATH and the hooks would run a Deno from the npx cache, and writes that path",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    // A Deno inside an npx cache, and a PATH of one empty folder: no deno
    // whatever /usr/bin holds.
    const cache = join(dir.path, ".npm", "_npx", "0123abcd", "deno");
    Deno.mkdirSync(cache, { recursive: true });
    const deno = join(cache, "deno");
    placeDeno(Deno.execPath(), deno);
    const empty = join(dir.path, "empty");
    Deno.mkdirSync(empty);
    const project = join(dir.path, "project");
    Deno.mkdirSync(project);
    const r = await installWith(deno, empty, project);
    assertEquals(r.code, 0, r.err);
    assertOk(/"deno" is not on PATH/.test(r.err), r.err);
    assertOk(r.err.includes(deno), r.err);
    assertOk(/Install a stable Deno/.test(r.err), r.err);
    assertOk(r.settings.includes(deno), r.settings);
    // npx puts its own cached deno on PATH: that one is no better.
    const npxBin = join(dir.path, ".npm", "_npx", "0123abcd", ".bin");
    Deno.mkdirSync(npxBin);
    placeDeno(deno, join(npxBin, "deno"));
    const npx = await installWith(deno, npxBin, project);
    assertEquals(npx.code, 0, npx.err);
    assertOk(/Install a stable Deno/.test(npx.err), npx.err);
    assertOk(npx.settings.includes(deno), npx.settings);
    assertOk(!/("|\.sh' )deno run /.test(npx.settings), npx.settings);
    // With a stable deno of this version on PATH the hooks say "deno" and
    // nothing is said.
    const bin = join(dir.path, "bin");
    Deno.mkdirSync(bin);
    placeDeno(deno, join(bin, "deno"));
    const quiet = await installWith(deno, bin, project);
    assertEquals(quiet.code, 0, quiet.err);
    assertOk(!/not on PATH/.test(quiet.err), quiet.err);
    assertOk(/("|\.sh' )deno run /.test(quiet.settings), quiet.settings);
    assertOk(!quiet.settings.includes(deno), quiet.settings);
  },
});

Deno.test("doctor says which hooks cannot record and why", async () => {
  const { main } = await import("../../ingest.ts");
  const { startServer } = await import("../_server.ts");
  await using srv = await startServer();
  await using dir = await tempDir();
  const run = async (args: string[]) => {
    let out = "";
    const code = await main(args, {
      out: (t) => out += t + "\n",
      err: () => {},
    });
    return { code, out };
  };
  assertEquals(
    (await run(["install", "host_b", "--project", dir.path, "--url", srv.url]))
      .code,
    0,
  );
  const good = await run(["doctor", "--project", dir.path, "--json"]);
  assertEquals(good.code, 0, good.out);
  const f = JSON.parse(good.out) as { host: string; state: string }[];
  assertEquals(f.find((x) => x.host === "host_b")?.state, "ok");
  // Point the hooks at a Deno that no longer exists.
  const file = join(dir.path, ".gemini/settings.json");
  const text = Deno.readTextFileSync(file);
  const s = JSON.parse(text);
  for (
    const groups of Object.values(s.hooks) as {
      hooks: { command: string }[];
    }[][]
  ) {
    for (const g of groups) {
      for (const h of g.hooks) {
        // The Deno the hook client falls back to (the word after it).
        h.command = h.command.replace(
          /(hook_client\.sh' )\S+/,
          "$1'/gone/npx-cache/deno'",
        );
      }
    }
  }
  Deno.writeTextFileSync(file, JSON.stringify(s));
  const bad = await run(["doctor", "--project", dir.path]);
  assertEquals(bad.code, 1);
  assertOk(
    /gemini-cli\s+broken\s+the Deno it runs \(\/gone\/npx-cache\/deno\) is gone/
      .test(bad.out),
    bad.out,
  );
  // A hook client that is gone (the checkout moved) is named too.
  Deno.writeTextFileSync(
    file,
    text.replaceAll(
      /'[^']*hook_client\.sh'/g,
      "'/gone/checkout/hook_client.sh'",
    ),
  );
  const moved = await run(["doctor", "--project", dir.path]);
  assertEquals(moved.code, 1);
  assertOk(
    moved.out.includes(
      "the hook client it runs (/gone/checkout/hook_client.sh) is gone",
    ),
    moved.out,
  );
});
