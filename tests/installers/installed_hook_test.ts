import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { quiet } from "./_quiet.ts";

Deno.test("the command hook the installer writes forwards a real payload when a shell runs it", async () => {
  const { main } = await import("../../ingest.ts");
  const { startServer } = await import("../_server.ts");
  await using srv = await startServer();
  await using dir = await tempDir();
  const code = await main(
    ["install", "host_b", "--project", dir.path, "--url", srv.url],
    quiet,
  );
  assertEquals(code, 0);
  const s = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".gemini/settings.json")),
  );
  const command = s.hooks.BeforeAgent[0].hooks[0].command as string;
  assertOk(command.includes(`--url '${srv.url}'`), command);
  const child = new Deno.Command("sh", {
    args: ["-c", command],
    cwd: dir.path,
    env: { HARNESS_CAPTURE_ID: "cap_installed" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify({
    session_id: "s-inst",
    hook_event_name: "BeforeAgent",
    prompt: "hi",
  })));
  await w.close();
  const out = await child.output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  assertEquals(new TextDecoder().decode(out.stdout).trim(), "{}");
  assertEquals(srv.store.getCapture("cap_installed")?.event_count, 1);
});

function runHook(
  command: string,
  payload: unknown,
  env: Record<string, string> = {},
): Promise<Deno.CommandOutput> {
  const child = new Deno.Command("bash", {
    args: ["-c", command],
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  w.write(new TextEncoder().encode(JSON.stringify(payload))).then(() =>
    w.close()
  ).catch(() => {});
  return child.output();
}

Deno.test("the installed hook command never blocks the host: no Deno, no checkout, a path with a space; and it records into the pinned capture", async () => {
  const { main } = await import("../../ingest.ts");
  const { startServer } = await import("../_server.ts");
  const { hookCommand } = await import(
    "../../lib/installers/hook_command.ts"
  );
  await using srv = await startServer();
  await using dir = await tempDir();
  const code = await main([
    "install",
    "gemini-cli",
    "--project",
    dir.path,
    "--url",
    srv.url,
    "--capture",
    "pinned_1",
  ], quiet);
  assertEquals(code, 0);
  const s = JSON.parse(
    Deno.readTextFileSync(join(dir.path, ".gemini/settings.json")),
  );
  const command = s.hooks.BeforeAgent[0].hooks[0].command as string;
  const payload = {
    session_id: "s-pin",
    hook_event_name: "BeforeAgent",
    prompt: "hi",
  };
  // All there: recorded into the pinned capture, whatever the environment says.
  const ok = await runHook(command, payload, {
    HARNESS_CAPTURE_ID: "somewhere_else",
  });
  assertEquals([ok.code, new TextDecoder().decode(ok.stdout).trim()], [
    0,
    "{}",
  ]);
  assertEquals(srv.store.getCapture("pinned_1")?.event_count, 1);
  assertEquals(srv.store.hasCapture("somewhere_else"), false);
  const parts = {
    host: "host_b",
    url: srv.url,
    defaultUrl: "http://127.0.0.1:8848",
    capture: "pinned_1",
    env: ["HARNESS_INGEST_URL"],
    answer: "{}",
  };
  const module = new URL("../../ingest.ts", import.meta.url).pathname;
  // Deno gone (the npx cache was cleared), the checkout gone: exit 0, the neutral answer.
  for (
    const broken of [
      hookCommand({ ...parts, launcher: "/nonexistent/deno", module }),
      hookCommand({
        ...parts,
        launcher: Deno.execPath(),
        module: "/nonexistent/ingest.ts",
      }),
    ]
  ) {
    const out = await runHook(broken, payload);
    assertEquals(out.code, 0, broken);
    assertEquals(new TextDecoder().decode(out.stdout).trim(), "{}");
    assertEquals(new TextDecoder().decode(out.stderr), "");
  }
  // A checkout path with a space.
  const spaced = join(dir.path, "my checkout");
  // (ln: Deno's own symlink call needs unscoped write permission.)
  const ln = new Deno.Command("ln", {
    args: ["-s", new URL("../../", import.meta.url).pathname, spaced],
  }).outputSync();
  assertEquals(ln.code, 0);
  const withSpace = hookCommand({
    ...parts,
    launcher: Deno.execPath(),
    module: join(spaced, "ingest.ts"),
  });
  const out = await runHook(withSpace, { ...payload, session_id: "s-space" });
  assertEquals(out.code, 0);
  assertEquals(srv.store.getCapture("pinned_1")?.event_count, 2);
  // The server down: still exit 0 and the answer.
  const down = hookCommand({
    ...parts,
    url: "http://127.0.0.1:9",
    launcher: Deno.execPath(),
    module,
  });
  const d = await runHook(down, payload);
  assertEquals([d.code, new TextDecoder().decode(d.stdout).trim()], [0, "{}"]);
});
