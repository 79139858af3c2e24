/**
 * The command line takes the hosts' real names and the seed's alike
 * (`install claude-code` is `install host_a`), and its help says the real
 * names; the hook forwarder given a real name posts what it posts for the
 * seed's.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HOST_TABLE } from "../../lib/trace/hosts.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { runMain } from "../_cli.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

/** Every file under `dir`, relative, with its text (`dir` written as `<dir>`). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(join(dir, rel))) {
      const sub = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory) walk(sub);
      else {
        out[sub] = Deno.readTextFileSync(join(dir, sub)).replaceAll(
          dir,
          "<dir>",
        );
      }
    }
  };
  walk("");
  return out;
}

for (const host of HOST_TABLE) {
  Deno.test(`install and uninstall ${host.name} do what ${host.seed} does`, async () => {
    await using a = await tempDir();
    await using b = await tempDir();
    const bySeed = await runMain(["install", host.seed, "--project", a.path]);
    const byName = await runMain(["install", host.name, "--project", b.path]);
    assertEquals(bySeed.code, 0, bySeed.err);
    assertEquals(
      [byName.code, byName.out.replaceAll(b.path, "<dir>")],
      [bySeed.code, bySeed.out.replaceAll(a.path, "<dir>")],
    );
    assertOk(Object.keys(tree(a.path)).length > 0, "install wrote files");
    assertEquals(tree(b.path), tree(a.path));
    // Either name takes out what the other put in.
    assertEquals(
      (await runMain(["uninstall", host.name, "--project", a.path])).code,
      0,
    );
    assertEquals(
      (await runMain(["uninstall", host.seed, "--project", b.path])).code,
      0,
    );
    assertEquals(tree(b.path), tree(a.path));
  });
}

Deno.test("ingest.ts -h names the hosts by their real names", async () => {
  const help = await runMain(["-h"]);
  for (const host of HOST_TABLE) {
    assertOk(help.out.includes(host.name), `${host.name} in the help`);
  }
  assertEquals(help.out.includes("<host_a|host_b|host_c>"), false);
});

Deno.test("ingest.ts hook claude-code posts what ingest.ts hook host_a posts", async () => {
  const payload = Deno.readTextFileSync(
    `${HOSTS_DIR}/host_a/basic/003-PreToolUse.json`,
  );
  await using srv = await startServer();
  for (
    const [word, cap] of [["host_a", "by_seed"], ["claude-code", "by_name"]]
  ) {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-net=127.0.0.1",
        "--allow-env=HARNESS_INGEST_URL,HARNESS_CAPTURE_ID,HARNESS_HOOK_TIMEOUT,HARNESS_INGEST_TOKEN",
        INGEST,
        "hook",
        word,
      ],
      env: { HARNESS_INGEST_URL: srv.url, HARNESS_CAPTURE_ID: cap },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(payload));
    await w.close();
    const out = await child.output();
    assertEquals(
      [out.code, new TextDecoder().decode(out.stdout)],
      [0, ""],
      word,
    );
  }
  const kinds = async (cap: string) => {
    const out: string[] = [];
    for await (const e of srv.store.readEvents(cap)) {
      out.push(`${e.source.host} ${e.kind}`);
    }
    return out;
  };
  const bySeed = await kinds("by_seed");
  assertEquals(bySeed, ["host_a tool.call.started"]);
  assertEquals(await kinds("by_name"), bySeed);
});
