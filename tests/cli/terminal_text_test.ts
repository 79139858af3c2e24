import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { main } from "../../ingest.ts";
import { escapeTerminalText, terminalIo } from "../../lib/cli/terminal_text.ts";
import { renderTable } from "../../lib/cli/table.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { tempDir } from "../_helpers.ts";

const HOSTILE = "\x1b]0;pwned\x07\x1b[2J";

async function run(
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(args, {
    out: (t) => out += t + "\n",
    err: (t) => err += t + "\n",
  });
  return { code, out, err };
}

Deno.test("escapeTerminalText() escapes C0, C1, DEL and bidi controls and keeps tab and newline", () => {
  assertEquals(
    escapeTerminalText(`a${HOSTILE}\tb\nc\r\x7f\x9b\u202e`),
    "a\\x1b]0;pwned\\x07\\x1b[2J\tb\nc\\x0d\\x7f\\x9b\\u202e",
  );
  assertEquals(
    escapeTerminalText("\r[###  ]", { carriageReturn: true }),
    "\r[###  ]",
  );
  assertEquals(escapeTerminalText('{"a":"\\u001b"}'), '{"a":"\\u001b"}');
});

Deno.test("terminalIo() escapes both channels", () => {
  const seen: string[] = [];
  const io = terminalIo({ out: (t) => seen.push(t), err: (t) => seen.push(t) });
  io.out(`x${HOSTILE}`);
  io.err(`y\x1b[31m`);
  assertEquals(seen, ["x\\x1b]0;pwned\\x07\\x1b[2J", "y\\x1b[31m"]);
});

Deno.test("capture list, inspect, summary and lineage print a hostile label, tool name and file path escaped", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const started = await run([
    "capture",
    "start",
    "--id",
    "c",
    "--label",
    `label${HOSTILE}`,
    "--root",
    root,
  ]);
  assertEquals(started.code, 0, started.err);
  {
    using store = new HarnessStore(root, { role: "ingest-server" });
    const server = new IngestServer(store, { port: 0 });
    const url = await server.start();
    try {
      for (const hook of ["BeforeTool", "AfterTool"]) {
        const res = await fetch(`${url}/hook/host_b?cap=c`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            session_id: "s-1",
            hook_event_name: hook,
            timestamp: "2026-11-22T02:31:28.898Z",
            tool_name: `read_file${HOSTILE}`,
            tool_input: { file_path: `notes${HOSTILE}.txt` },
            ...(hook === "AfterTool"
              ? { tool_response: { llmContent: "ord_123", returnDisplay: "" } }
              : {}),
          }),
        });
        await res.body?.cancel();
        assertEquals(res.status, 200);
      }
    } finally {
      await server.close();
    }
  }
  const outputs = [];
  for (
    const args of [
      ["capture", "list"],
      ["capture", "inspect", "c"],
      ["capture", "summary", "c"],
      ["capture", "lineage", "c"],
    ]
  ) {
    const r = await run([...args, "--root", root]);
    assertEquals(r.code, 0, `${args.join(" ")}: ${r.err}`);
    // deno-lint-ignore no-control-regex
    assertOk(!/[\x00-\x08\x0b-\x1f\x7f]/.test(r.out + r.err), r.out);
    outputs.push(r.out);
  }
  assertOk(outputs[0].includes("\\x1b]0;pwned\\x07"), outputs[0]);
  assertOk(
    outputs.join("").includes("read_file\\x1b]0;pwned"),
    outputs.join(""),
  );
});

Deno.test("renderTable() escapes cells before measuring, so columns stay aligned", () => {
  const text = renderTable(["label", "n"], [[`a${HOSTILE}`, "1"], ["b", "2"]]);
  const [head, , first, second] = text.split("\n");
  assertEquals(first.lastIndexOf("1"), second.lastIndexOf("2"));
  assertEquals(head.lastIndexOf("n"), first.lastIndexOf("1"));
  assertOk(first.startsWith("a\\x1b]0;pwned"), first);
});
