import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { runMain as run } from "../_cli.ts";
import { startServer } from "../_server.ts";
import { checkHooks } from "../../lib/cli/cmd_doctor.ts";
import { CaptureCoordinator } from "../../lib/control/coordinator.ts";

type Finding = { host: string; check: string; state: string; detail: string };

function gatewayFinding(out: string, host: string): Finding | undefined {
  return (JSON.parse(out) as Finding[])
    .find((f) => f.host === host && f.check === "gateway");
}

/** A loopback port nothing listens on. */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Whether this checkout's ingest server has the model gateway (`/health.model_gateway`). */
async function serverHasGateway(): Promise<boolean> {
  await using srv = await startServer();
  const health = await (await fetch(`${srv.url}/health`)).json();
  return typeof health.model_gateway?.requests === "number";
}
const HAS_GATEWAY = await serverHasGateway();

Deno.test("doctor reports nothing about a gateway when none was installed", async () => {
  await using dir = await tempDir();
  const r = await run(["install", "claude-code", "--project", dir.path]);
  assertEquals(r.code, 0, r.err);
  const d = await run(["doctor", "--project", dir.path, "--json"]);
  assertEquals(gatewayFinding(d.out, "host_a"), undefined);
});

Deno.test("doctor exits 1 when a host's model calls go to a server that does not run: the host cannot reach its model", async () => {
  await using dir = await tempDir();
  const url = `http://127.0.0.1:${closedPort()}`;
  for (const host of ["claude-code", "opencode"]) {
    const r = await run([
      "install",
      host,
      "--project",
      dir.path,
      "--url",
      url,
      "--gateway",
    ]);
    assertEquals(r.code, 0, r.err);
  }
  const d = await run(["doctor", "--project", dir.path, "--json"]);
  assertEquals(d.code, 1, d.out);
  for (const host of ["host_a", "host_c"]) {
    const f = gatewayFinding(d.out, host);
    assertEquals(f?.state, "broken", d.out);
    assertOk(
      /no server answers at .* cannot reach its model .*ingest\.ts serve.*ingest\.ts uninstall/
        .test(f!.detail),
      f!.detail,
    );
  }
});

Deno.test("doctor says the server has no model gateway when its /health carries no model_gateway", async () => {
  // A server with the model gateway off answers /health as one that
  // predates it.
  await using srv = await startServer({ modelGateway: false });
  await using dir = await tempDir();
  const r = await run([
    "install",
    "claude-code",
    "--project",
    dir.path,
    "--url",
    srv.url,
    "--gateway",
  ]);
  assertEquals(r.code, 0, r.err);
  const d = await run(["doctor", "--project", dir.path]);
  assertEquals(d.code, 1, d.out);
  assertOk(
    /claude-code\s+broken\s+model gateway: the server at http:\/\/127\.0\.0\.1:\d+ has no model gateway/
      .test(d.out),
    d.out,
  );
  assertOk(/ingest\.ts stop/.test(d.out), d.out);
});

Deno.test("doctor exits 1 when .claude/settings.local.json sends the model calls elsewhere", async () => {
  await using dir = await tempDir();
  const url = `http://127.0.0.1:${closedPort()}`;
  const r = await run([
    "install",
    "claude-code",
    "--project",
    dir.path,
    "--url",
    url,
    "--gateway",
  ]);
  assertEquals(r.code, 0, r.err);
  const local = join(dir.path, ".claude", "settings.local.json");
  Deno.writeTextFileSync(
    local,
    `{"env": {"ANTHROPIC_BASE_URL": "https://llm.corp.example"}}`,
  );
  const d = await run(["doctor", "--project", dir.path, "--json"]);
  assertEquals(d.code, 1, d.out);
  const f = gatewayFinding(d.out, "host_a")!;
  assertEquals(f.state, "broken");
  assertOk(f.detail.includes(local), f.detail);
  assertOk(/which wins over .*settings\.json/.test(f.detail), f.detail);
});

Deno.test("doctor says the gateway is no longer in place when the base URL was changed by hand", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "opencode.json");
  const r = await run([
    "install",
    "opencode",
    "--project",
    dir.path,
    "--gateway",
  ]);
  assertEquals(r.code, 0, r.err);
  const c = JSON.parse(Deno.readTextFileSync(file));
  c.provider.openai.options.baseURL = "https://api.openai.com/v1";
  Deno.writeTextFileSync(file, JSON.stringify(c));
  const d = await run(["doctor", "--project", dir.path, "--json"]);
  const f = gatewayFinding(d.out, "host_c")!;
  assertEquals(f.state, "absent", d.out);
  assertOk(/no longer sends the host's model calls to/.test(f.detail));
});

// The tests below need the model gateway on the ingest server
// (`/health.model_gateway`, lib/model_gateway/); they are skipped on a
// checkout without it.

Deno.test({
  name:
    "doctor waits while no model request has arrived, says what to check, then counts the requests that reached the gateway",
  ignore: !HAS_GATEWAY,
  async fn() {
    // A scripted Anthropic upstream: the gateway forwards to it.
    await using upstream = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (req) => {
        await req.body?.cancel();
        return Response.json({
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-test",
          content: [{ type: "text", text: "hi" }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 3, output_tokens: 1 },
        });
      },
    );
    await using srv = await startServer({
      modelGateway: {
        upstreamAnthropic: `http://127.0.0.1:${upstream.addr.port}`,
      },
    });
    new CaptureCoordinator(srv.store).startCapture({ id: "cap_live" });
    await using dir = await tempDir();
    const r = await run([
      "install",
      "claude-code",
      "--project",
      dir.path,
      "--url",
      srv.url,
      "--gateway",
      "--capture",
      "cap_live",
    ]);
    assertEquals(r.code, 0, r.err);
    // Nothing yet: waiting (exit 0), with what to check.
    const env = (name: string) =>
      name === "ANTHROPIC_BASE_URL" ? "https://elsewhere.example" : undefined;
    const before = (await checkHooks(dir.path, { env }))
      .find((f) => f.check === "gateway")!;
    assertEquals(before.state, "waiting", before.detail);
    assertOk(/no model request has reached/.test(before.detail));
    assertOk(before.detail.includes(`started in ${dir.path}`), before.detail);
    assertOk(
      /this shell sets ANTHROPIC_BASE_URL=https:\/\/elsewhere\.example/
        .test(before.detail),
      before.detail,
    );
    // One model call the way Claude Code makes it (base URL + /v1/messages,
    // the custom header line).
    const s = JSON.parse(
      Deno.readTextFileSync(join(dir.path, ".claude", "settings.json")),
    );
    const [name, value] = s.env.ANTHROPIC_CUSTOM_HEADERS.split(": ");
    const res = await fetch(`${s.env.ANTHROPIC_BASE_URL}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": "test-key",
        [name]: value,
      },
      body: JSON.stringify({
        model: "claude-test",
        max_tokens: 16,
        messages: [{ role: "user", content: "hello" }],
      }),
    });
    assertEquals(res.status, 200, await res.text());
    const d = await run(["doctor", "--project", dir.path, "--json"]);
    assertEquals(d.code, 0, d.out);
    const f = gatewayFinding(d.out, "host_a")!;
    assertEquals(f.state, "ok", f.detail);
    assertOk(
      /^model gateway: 1 model request seen by the server, [01] recorded; the last at \d{4}-/
        .test(f.detail),
      f.detail,
    );
  },
});

Deno.test({
  name: "doctor exits 1 when the model calls are pinned to a finished capture",
  ignore: !HAS_GATEWAY,
  async fn() {
    await using srv = await startServer();
    const coord = new CaptureCoordinator(srv.store);
    coord.startCapture({ id: "done_g" });
    coord.finishCapture("done_g");
    await using dir = await tempDir();
    const r = await run([
      "install",
      "opencode",
      "--project",
      dir.path,
      "--url",
      srv.url,
      "--gateway",
      "--capture",
      "done_g",
    ]);
    assertEquals(r.code, 0, r.err);
    const d = await run(["doctor", "--project", dir.path, "--json"]);
    assertEquals(d.code, 1, d.out);
    const f = gatewayFinding(d.out, "host_c")!;
    assertEquals(f.state, "broken");
    assertOk(/pinned to capture "done_g", which is finished/.test(f.detail));
  },
});
