/**
 * Claude Code's built-in tools over a working folder
 * (`examples/claude_code/`): they answer in the shapes the recorded
 * PostToolUse hooks hold, and never reach outside the folder.
 */
import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import { join } from "node:path";
import {
  createCapabilities,
  WorkspaceToolError,
} from "../../examples/claude_code/workspace_capabilities.ts";
import { callWithArgs } from "../../lib/runtime/bind_args.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";

/** A recorded PostToolUse payload's tool_response, by tool. */
function recorded(tool: string): Record<string, unknown> {
  const dir = `${HOSTS_DIR}/host_a/dataflow/v1`;
  for (const e of [...Deno.readDirSync(dir)].map((e) => e.name).sort()) {
    if (!e.endsWith("-PostToolUse.json")) continue;
    const p = JSON.parse(Deno.readTextFileSync(`${dir}/${e}`));
    if (p.tool_name === tool) return p.tool_response;
  }
  throw new Error(`no recorded ${tool}`);
}

const keys = (o: unknown) => Object.keys(o as object).sort();

Deno.test("builtinTools(): Read, Bash and Write answer in the shapes Claude Code's PostToolUse records, and Edit edits", async () => {
  await using dir = await tempDir();
  const folder = await Deno.realPath(dir.path);
  await Deno.writeTextFile(join(folder, "queue.txt"), "a\nnext: ORD-1\n");
  const { tools, input } = createCapabilities({ args: [folder, "do", "it"] });
  assertEquals(input, { cwd: folder, text: "do it" });
  const call = (tool: string, args: Record<string, unknown>) =>
    Promise.resolve(callWithArgs({ tool: tools[tool], args, name: tool }));

  const bash = await call("Bash", { command: "grep '^next:' queue.txt" });
  assertEquals(keys(bash), keys(recorded("Bash")));
  assertEquals((bash as { stdout: string }).stdout, "next: ORD-1");

  const read = await call("Read", { file_path: `${folder}/queue.txt` }) as {
    type: string;
    file: Record<string, unknown>;
  };
  assertEquals(keys(read), keys(recorded("Read")));
  assertEquals(
    keys(read.file),
    keys((recorded("Read") as { file: unknown }).file),
  );
  assertEquals(read.file.content, "a\nnext: ORD-1\n");
  assertEquals(read.file.numLines, 3);

  const written = await call("Write", {
    file_path: `${folder}/reports/x.txt`,
    content: "hello\n",
  }) as { type: string };
  assertEquals(keys(written), keys(recorded("Write")));
  assertEquals(written.type, "create");
  const again = await call("Write", {
    file_path: `${folder}/reports/x.txt`,
    content: "hello world\n",
  }) as { type: string; originalFile: string };
  assertEquals([again.type, again.originalFile], ["update", "hello\n"]);

  await call("Edit", {
    file_path: `${folder}/reports/x.txt`,
    old_string: "world",
    new_string: "there",
  });
  assertEquals(
    await Deno.readTextFile(`${folder}/reports/x.txt`),
    "hello there\n",
  );
});

Deno.test("builtinTools(): a path outside the working folder is refused, a failing command fails the call as Claude Code reports it", async () => {
  await using dir = await tempDir();
  await using other = await tempDir();
  const folder = await Deno.realPath(dir.path);
  const { tools } = createCapabilities({ args: [folder] });
  const call = (tool: string, args: Record<string, unknown>) =>
    Promise.resolve(callWithArgs({ tool: tools[tool], args, name: tool }));
  // A link inside the folder to a folder outside it (ln: Deno.symlink
  // needs unscoped write permission).
  const ln = await new Deno.Command("ln", {
    args: ["-s", other.path, `${folder}/link`],
  }).output();
  assertOk(ln.success);
  for (
    const path of [
      `${other.path}/x.txt`,
      `${folder}/../x.txt`,
      `${folder}/link/x.txt`,
      "link/sub/x.txt",
    ]
  ) {
    const err = await assertRejects(
      () => call("Write", { file_path: path, content: "no" }),
      WorkspaceToolError,
    );
    assertOk(/outside the working folder/.test(err.message), err.message);
  }
  assertEquals([...Deno.readDirSync(other.path)].length, 0);
  const err = await assertRejects(
    () => call("Bash", { command: "echo out; echo err >&2; exit 3" }),
    WorkspaceToolError,
  );
  assertEquals(err.message, "Exit code 3\nout\nerr");
  const missing = await assertRejects(
    () => call("Read", { file_path: `${folder}/missing.txt` }),
    WorkspaceToolError,
  );
  assertOk(/^File does not exist/.test(missing.message), missing.message);
});
