import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HOSTS_DIR, silentServer, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { hangGuard } from "../_wait.ts";
import {
  HOOK_CLIENT_PATH,
  hookCommand,
} from "../../lib/installers/hook_command.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const INGEST = join(ROOT, "ingest.ts");
const CLIENT = join(ROOT, HOOK_CLIENT_PATH);
const ENV = [
  "HARNESS_INGEST_URL",
  "HARNESS_CAPTURE_ID",
  "HARNESS_HOOK_TIMEOUT",
  "HARNESS_INGEST_TOKEN",
];
const B_PAYLOAD = Deno.readTextFileSync(
  `${HOSTS_DIR}/host_b/basic/002-BeforeAgent.json`,
);
const A_PAYLOAD = Deno.readTextFileSync(
  `${HOSTS_DIR}/host_a/basic/003-PreToolUse.json`,
);

/** The installed command for a host, through the hook client. */
function clientCommand(
  host: string,
  o: { url: string; capture?: string; launcher?: string },
): string {
  return hookCommand({
    client: CLIENT,
    launcher: o.launcher ?? Deno.execPath(),
    module: INGEST,
    host,
    url: o.url,
    defaultUrl: "http://127.0.0.1:8848",
    capture: o.capture,
    env: ENV,
    answer: host === "host_b" ? "{}" : "",
  });
}

/** Run a hook command as a host does: `sh -c`, the payload on stdin. */
async function runHook(
  command: string,
  payload: string,
  o: { env?: Record<string, string>; keepStdinOpen?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", command],
    env: o.env ?? {},
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(payload)).catch(() => {});
  if (!o.keepStdinOpen) await w.close().catch(() => {});
  using _guard = hangGuard(child);
  const out = await child.output();
  if (o.keepStdinOpen) await w.close().catch(() => {});
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("the hook client posts a real payload with curl into the pinned capture and prints only the host's answer", async () => {
  await using srv = await startServer();
  // A Deno that does not exist: whatever arrives came through curl.
  const launcher = "/nonexistent/deno";
  const b = await runHook(
    clientCommand("host_b", { url: srv.url, capture: "pin_b", launcher }),
    B_PAYLOAD,
    { env: { HARNESS_CAPTURE_ID: "elsewhere" } },
  );
  assertEquals([b.code, b.stdout, b.stderr], [0, "{}\n", ""]);
  assertEquals(srv.store.getCapture("pin_b")?.event_count, 1);
  assertEquals(srv.store.hasCapture("elsewhere"), false);
  const a = await runHook(
    clientCommand("host_a", { url: srv.url, capture: "pin_a", launcher }),
    A_PAYLOAD,
  );
  assertEquals([a.code, a.stdout, a.stderr], [0, "", ""]);
  assertEquals(srv.store.getCapture("pin_a")?.event_count, 1);
});

Deno.test("the hook client reads HARNESS_CAPTURE_ID when nothing is pinned, and HARNESS_INGEST_URL wins over the installed URL", async () => {
  await using srv = await startServer();
  const r = await runHook(
    clientCommand("host_b", {
      url: "http://127.0.0.1:9",
      launcher: "/nonexistent/deno",
    }),
    B_PAYLOAD,
    { env: { HARNESS_CAPTURE_ID: "from_env", HARNESS_INGEST_URL: srv.url } },
  );
  assertEquals([r.code, r.stdout], [0, "{}\n"]);
  assertEquals(srv.store.getCapture("from_env")?.event_count, 1);
});

Deno.test("the hook client sends HARNESS_INGEST_TOKEN as a bearer token, and without it the server's refusal still exits 0", async () => {
  await using srv = await startServer({ token: "s3cret 'quoted' $x" });
  const command = clientCommand("host_b", {
    url: srv.url,
    capture: "tok",
    launcher: "/nonexistent/deno",
  });
  const refused = await runHook(command, B_PAYLOAD);
  assertEquals([refused.code, refused.stdout], [0, "{}\n"]);
  assertEquals(srv.store.hasCapture("tok"), false);
  const ok = await runHook(command, B_PAYLOAD, {
    env: { HARNESS_INGEST_TOKEN: "s3cret 'quoted' $x" },
  });
  assertEquals([ok.code, ok.stdout], [0, "{}\n"]);
  assertEquals(srv.store.getCapture("tok")?.event_count, 1);
});

Deno.test("the hook client fails open: server down, server silent, stdin never closed (how soon: deno task bench reliability)", async () => {
  let port: number;
  {
    await using server = silentServer();
    port = server.port;
    const silent = clientCommand("host_b", {
      url: `http://127.0.0.1:${port}`,
      launcher: "/nonexistent/deno",
    });
    const env = { HARNESS_HOOK_TIMEOUT: "300" };
    const s = await runHook(silent, B_PAYLOAD, { env });
    assertEquals([s.code, s.stdout, s.stderr], [0, "{}\n", ""]);
    const open = await runHook(silent, B_PAYLOAD, {
      env,
      keepStdinOpen: true,
    });
    assertEquals(
      [open.code, open.stdout],
      [0, "{}\n"],
      "killed: the hook waited on",
    );
  }
  const down = await runHook(
    clientCommand("host_a", {
      url: `http://127.0.0.1:${port}`,
      launcher: "/nonexistent/deno",
    }),
    A_PAYLOAD,
    { env: { HARNESS_HOOK_TIMEOUT: "5000" } },
  );
  assertEquals([down.code, down.stdout, down.stderr], [0, "", ""]);
});

Deno.test("without curl on PATH the hook client runs the Deno forwarder, which records the payload", async () => {
  await using srv = await startServer();
  await using bin = await tempDir();
  // A PATH of sh and deno only.
  for (const [name, target] of [["sh", "/bin/sh"], ["deno", Deno.execPath()]]) {
    const ln = new Deno.Command("ln", {
      args: ["-s", target, join(bin.path, name)],
    }).outputSync();
    assertEquals(ln.code, 0);
  }
  const r = await runHook(
    clientCommand("host_b", {
      url: srv.url,
      capture: "no_curl",
      launcher: "deno",
    }),
    B_PAYLOAD,
    { env: { PATH: bin.path } },
  );
  assertEquals([r.code, r.stdout], [0, "{}\n"], r.stderr);
  assertEquals(srv.store.getCapture("no_curl")?.event_count, 1);
});

Deno.test("under dash the hook client reads any HARNESS_HOOK_TIMEOUT as decimal milliseconds (clamped, else the default), posts, and exits 0", async () => {
  await using srv = await startServer();
  await using bin = await tempDir();
  // curl as the client calls it, its arguments kept, then the real curl.
  const real = new Deno.Command("/bin/sh", {
    args: ["-c", "command -v curl"],
    stdout: "piped",
  }).outputSync();
  const curl = new TextDecoder().decode(real.stdout).trim();
  assertOk(curl !== "", "curl is on PATH");
  const argsFile = join(bin.path, "args");
  Deno.writeTextFileSync(
    join(bin.path, "curl"),
    `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexec '${curl}' "$@"\n`,
  );
  Deno.chmodSync(join(bin.path, "curl"), 0o755);
  // The client itself, under dash (no installed "|| printf" fallback to
  // hide its exit status).
  const command = [
    "dash",
    CLIENT,
    "/nonexistent/deno run ingest.ts hook host_b --url",
    srv.url,
    "--capture timeouts",
  ].join(" ");
  const cases: [string, string][] = [
    ["0900", "0.900"], // dash: "Illegal number" (exit 2, the hosts' "block")
    ["08", "0.008"],
    ["010", "0.010"], // not octal 8
    ["12345678901234567890", "60.000"], // past dash's arithmetic
    ["99999", "60.000"],
    ["000", "0.300"],
    ["-5", "0.300"],
    ["1e3", "0.300"],
    ["2500", "2.500"],
  ];
  for (const [value, seconds] of cases) {
    const before = srv.store.getCapture("timeouts")?.event_count ?? 0;
    const r = await runHook(command, B_PAYLOAD, {
      env: {
        PATH: `${bin.path}:/usr/bin:/bin`,
        HARNESS_HOOK_TIMEOUT: value,
      },
    });
    assertEquals([r.code, r.stdout, r.stderr], [0, "{}\n", ""], value);
    const args = Deno.readTextFileSync(argsFile).split("\n");
    assertEquals(args[args.indexOf("-m") + 1], seconds, value);
    // A time-out of seconds leaves the server time to store the payload;
    // one of milliseconds may not on a busy machine (it fails open).
    if (Number(seconds) >= 2) {
      assertOk(
        (srv.store.getCapture("timeouts")?.event_count ?? 0) > before,
        `${value}: posted`,
      );
    }
  }
});
