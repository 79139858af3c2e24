/**
 * `harness_compile` keeps packages under `<store>/packages/`: a name that
 * is a path is an invalid argument (issue 35, item 12).
 */
import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { buildMcpServer } from "../../lib/control/mcp_server.ts";
import { controlTools } from "../../lib/control/mcp_tools.ts";
import type { CaptureCoordinator } from "../../lib/control/coordinator.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { tempDir } from "../_helpers.ts";

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

Deno.test({
  name:
    "harness_compile refuses a name that is a path as an invalid argument; a plain name lands under packages/",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const root = join(dir.path, "a", "b", "store");
    using store = new HarnessStore(root);
    generateDeskEpisodes(store.sink("desk"), "desk", 40);
    const { server } = await buildMcpServer(store);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(b);
    try {
      const before = walk(dir.path).sort();
      for (const name of ["../../../x", "a/b", "..", ".x"]) {
        const err = await assertRejects(() =>
          client.callTool({
            name: "harness_compile",
            arguments: { capture_ids: ["desk"], name, effects: DESK_EFFECTS },
          })
        );
        assertMatch(
          err.message,
          /Invalid arguments for harness_compile: name: not a package name/,
        );
      }
      assertEquals(walk(dir.path).sort(), before);
      const ok = await client.callTool({
        name: "harness_compile",
        arguments: {
          capture_ids: ["desk"],
          name: "desk",
          effects: DESK_EFFECTS,
        },
      });
      assertEquals(ok.isError, undefined, JSON.stringify(ok.content));
      const file = (ok.structuredContent as { file: string }).file;
      assertOk(file.startsWith(join(root, "packages") + "/"), file);
    } finally {
      await client.close();
    }
  },
});

Deno.test("controlTools() harness_compile refuses a path name even when called without the schema", async () => {
  let compiled = 0;
  const coordinator = {
    compile: () => {
      compiled++;
      throw new Error("not reached");
    },
  } as unknown as CaptureCoordinator;
  const { z } = await import("zod");
  const tool = controlTools(z, coordinator).find((t) =>
    t.name === "harness_compile"
  )!;
  const err = await assertRejects(
    () => tool.run({ capture_ids: ["desk"], name: "../../../x" }),
    TypeError,
  );
  assertMatch(err.message, /name: "..\/..\/..\/x" is not a package name/);
  assertEquals(compiled, 0);
});
