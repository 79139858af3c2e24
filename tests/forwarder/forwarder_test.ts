/**
 * The Deno forwarder (`ingest.ts hook`) forwards a payload and fails open:
 * exit 0 with the host's answer whatever the server does. How soon it gives
 * up is measured by `deno task bench reliability` (`_reliability_hooks.ts`),
 * not here: a test on a busy machine checks what it does, not how fast.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR, silentServer } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { hangGuard } from "../_wait.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;
const PAYLOAD = Deno.readTextFileSync(
  `${HOSTS_DIR}/host_a/basic/003-PreToolUse.json`,
);

async function forward(
  host: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-net=127.0.0.1",
      "--allow-env=HARNESS_INGEST_URL,HARNESS_CAPTURE_ID,HARNESS_HOOK_TIMEOUT,HARNESS_INGEST_TOKEN",
      INGEST,
      "hook",
      host,
    ],
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(PAYLOAD));
  await w.close();
  using _guard = hangGuard(child);
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
  };
}

Deno.test("ingest.ts hook forwards a payload to a running server and prints nothing for host_a", async () => {
  await using srv = await startServer();
  const r = await forward("host_a", {
    HARNESS_INGEST_URL: srv.url,
    HARNESS_CAPTURE_ID: "cap_fwd",
  });
  assertEquals([r.code, r.stdout], [0, ""]);
  assertEquals(srv.store.getCapture("cap_fwd")?.event_count, 1);
});

Deno.test("ingest.ts hook prints {} for host_b and exits 0 when the server rejects the payload", async () => {
  await using srv = await startServer();
  const r = await forward("host_b", { HARNESS_INGEST_URL: srv.url });
  // A host_a payload on the host_b path: the server answers ok:false.
  assertEquals([r.code, r.stdout.trim()], [0, "{}"]);
});

Deno.test("ingest.ts hook exits 0 and prints nothing for host_a when the server is down", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const r = await forward("host_a", {
    HARNESS_INGEST_URL: `http://127.0.0.1:${port}`,
    HARNESS_HOOK_TIMEOUT: "5000",
  });
  assertEquals([r.code, r.stdout], [0, ""]);
});

Deno.test("ingest.ts hook exits 0 when the server accepts and never answers: its time-out ends the wait", async () => {
  await using silent = silentServer();
  const r = await forward("host_a", {
    HARNESS_INGEST_URL: `http://127.0.0.1:${silent.port}`,
    HARNESS_HOOK_TIMEOUT: "300",
  });
  assertEquals([r.code, r.stdout], [0, ""], "killed: the hook waited on");
});

Deno.test("ingest.ts hook does not wait forever on a stdin the host never closes, and still forwards what arrived", async () => {
  await using srv = await startServer();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-net=127.0.0.1",
      "--allow-env=HARNESS_INGEST_URL,HARNESS_CAPTURE_ID,HARNESS_HOOK_TIMEOUT,HARNESS_INGEST_TOKEN",
      INGEST,
      "hook",
      "host_b",
    ],
    env: {
      HARNESS_INGEST_URL: srv.url,
      // The forwarder gives up on stdin at twice this (4 s), then posts
      // within it: 2 s, not 200 ms, for the post to a real server to go
      // through on a busy machine.
      HARNESS_HOOK_TIMEOUT: "2000",
      HARNESS_CAPTURE_ID: "open_stdin",
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify({
    session_id: "s-open",
    hook_event_name: "BeforeAgent",
    prompt: "hi",
  })));
  // The writer stays open: the forwarder must give up on stdin by itself.
  using _guard = hangGuard(child);
  const out = await child.output();
  await w.close().catch(() => {});
  assertEquals(out.code, 0, "killed: the forwarder waited on stdin");
  assertEquals(new TextDecoder().decode(out.stdout).trim(), "{}");
  assertEquals(srv.store.getCapture("open_stdin")?.event_count, 1);
});

Deno.test("ingest.ts hook gives up at its deadline when the server's accept queue is full (connect itself hangs)", async () => {
  // A listener that never accepts: once its queue is full, a connect hangs.
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  const conns: Deno.Conn[] = [];
  let full = false;
  for (let i = 0; i < 4096 && !full; i++) {
    const c = Deno.connect({ hostname: "127.0.0.1", port });
    // A probe, not a wait: a connect still pending after 200 ms is taken
    // for a full queue (taken too soon on a busy machine, the hook meets a
    // server that never answers, and must exit 0 all the same).
    const r = await Promise.race([
      c,
      new Promise<null>((res) => setTimeout(() => res(null), 200)),
    ]);
    if (r === null) {
      full = true;
      c.then((x) => x.close(), () => {});
    } else conns.push(r);
  }
  try {
    assertOk(full, "could not fill the accept queue");
    const r = await forward("host_b", {
      HARNESS_INGEST_URL: `http://127.0.0.1:${port}`,
      HARNESS_HOOK_TIMEOUT: "200",
    });
    assertEquals([r.code, r.stdout.trim()], [0, "{}"]);
  } finally {
    for (const c of conns) c.close();
    l.close();
  }
});
