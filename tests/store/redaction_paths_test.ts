/**
 * One redaction on every path into the store: the sinks redact every
 * payload before sealing, so `/ingest`, OTLP, the importers, the tool
 * gateway (and the proxy and the model gateway, which write through the
 * same sinks) store no credential shape; `redaction: false` keeps them.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { startServer } from "../_server.ts";
import { tempDir } from "../_helpers.ts";
import { runMain } from "../_cli.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { ToolGateway } from "../../lib/tool_gateway/tool_gateway.ts";
import { toolCallStarted } from "../../lib/trace/tool_events.ts";

const SECRET = "sk-ant-api03-" + "Zq9x".repeat(10);
const TEXT = `use Authorization: Bearer ${SECRET} and OPENAI_API_KEY=${SECRET}`;

/** Every file under a folder, as text, that holds the secret. */
function holders(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of Deno.readDirSync(d)) {
      const p = join(d, e.name);
      if (e.isDirectory) walk(p);
      else if (
        new TextDecoder().decode(Deno.readFileSync(p)).includes(SECRET)
      ) {
        out.push(p);
      }
    }
  };
  walk(dir);
  return out;
}

Deno.test("/ingest and OTLP: a secret in a payload is redacted before it is sealed", async () => {
  await using s = await startServer();
  const ev = toolCallStarted({
    captureId: "c",
    episodeId: "e",
    source: { host: "me", adapter: "me", model: null },
  }, { tool: { host_name: "t", logical_id: null }, arguments: { q: TEXT } });
  const a = await fetch(`${s.url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(ev),
  });
  assertEquals(a.status, 200, await a.text());
  const span = {
    resourceSpans: [{
      resource: { attributes: [] },
      scopeSpans: [{
        scope: { name: "x" },
        spans: [{
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "b7ad6b7169203331",
          name: "execute_tool lookup",
          startTimeUnixNano: "1700000000000000000",
          endTimeUnixNano: "1700000001000000000",
          attributes: [
            { key: "gen_ai.tool.name", value: { stringValue: "lookup" } },
            { key: "gen_ai.tool.call.arguments", value: { stringValue: TEXT } },
          ],
        }],
      }],
    }],
  };
  const b = await fetch(`${s.url}/v1/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-harness-capture": "o" },
    body: JSON.stringify(span),
  });
  assertEquals(b.status, 200, await b.text());
  s.store.flush();
  assertEquals(holders(s.root), []);
  const stored = [];
  for await (const e of s.store.readEvents("c")) stored.push(e);
  assertOk(JSON.stringify(stored).includes("[REDACTED:"));
});

Deno.test("an import and the tool gateway: secrets are redacted; redaction: false keeps them", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const file = join(dir.path, "conv.json");
  Deno.writeTextFileSync(
    file,
    JSON.stringify([{ messages: [{ role: "user", content: TEXT }] }]),
  );
  const imported = await runMain([
    "import",
    "--format",
    "openai-messages",
    file,
    "--capture",
    "imp",
    "--root",
    root,
  ]);
  assertEquals(imported.code, 0, imported.err);
  {
    using store = new HarnessStore(root);
    const gw = new ToolGateway(store.sink("gw"), {
      captureId: "gw",
      episodeId: "e1",
    });
    const login = gw.wrap((_a: { password: string }) => "ok", {
      hostName: "login",
    });
    await login({ password: SECRET });
  }
  assertEquals(holders(join(root, "captures")), []);
  assertEquals(holders(join(root, "blobs")).length, 0);
  // Off: stored as given.
  const raw = join(dir.path, "raw");
  {
    using store = new HarnessStore(raw, { redaction: false });
    const gw = new ToolGateway(store.sink("gw"), {
      captureId: "gw",
      episodeId: "e1",
    });
    const login = gw.wrap((_a: { password: string }) => "ok", {
      hostName: "login",
    });
    await login({ password: SECRET });
  }
  assertEquals(holders(join(raw, "captures")).length, 1);
});
