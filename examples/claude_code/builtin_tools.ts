/**
 * Claude Code's built-in tools over one working folder, for running a
 * package compiled from Claude Code sessions: `Read`, `Bash`, `Write` and
 * `Edit`, each taking the arguments Claude Code's tool takes and answering
 * in the shape its PostToolUse hook records as `tool_response` (see
 * `fixtures/hosts/host_a/FACTS.md`), so that a package's refs into earlier
 * results (`Read_1.file.content~json.customer`, `Bash_0.stdout~word[1]`)
 * resolve as they did in the recorded sessions.
 *
 * Paths must lie inside the folder (a package never reads or writes
 * elsewhere); `Bash` runs `bash -c` in the folder, which needs
 * `--allow-run=bash` and can do whatever a shell there can: run only
 * packages you trust, in a folder you can lose. A command that exits with
 * a non-zero code fails the call as Claude Code reports it (`Exit code N`
 * and the output).
 *
 * @module
 */
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { declareTool } from "../../lib/tool_gateway/parameters.ts";
import type { ToolRegistry } from "../../lib/runtime/runtime_types.ts";

/** A path outside the working folder, or a call that cannot run. */
export class WorkspaceToolError extends Error {
  /**
   * Create a `WorkspaceToolError`.
   *
   * @param message What failed and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "WorkspaceToolError";
  }
}

function within(folder: string, abs: string): boolean {
  const rel = relative(folder, abs);
  return !(rel === ".." || rel.startsWith("../") || isAbsolute(rel));
}

/**
 * A path of an argument, absolute and checked to lie inside `folder` (the
 * folder's real path), symbolic links followed as far as the path exists.
 */
async function inside(
  folder: string,
  path: unknown,
  tool: string,
): Promise<string> {
  if (typeof path !== "string" || path === "") {
    throw new WorkspaceToolError(`${tool} needs a file_path (a string)`);
  }
  const abs = resolve(folder, path);
  let real: string | null = null;
  for (let probe = abs; real === null; probe = dirname(probe)) {
    try {
      real = await Deno.realPath(probe);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) || probe === "/") throw err;
    }
  }
  if (!within(folder, abs) || !within(folder, real)) {
    throw new WorkspaceToolError(
      `${tool}: "${path}" is outside the working folder "${folder}"; a package reads and writes only there`,
    );
  }
  return abs;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** `Read {file_path, offset?, limit?}` → `{type: "text", file: {…}}`. */
async function read(folder: string, a: Record<string, unknown>) {
  const filePath = await inside(folder, a.file_path, "Read");
  const text = await readOrNull(filePath);
  if (text === null) {
    throw new WorkspaceToolError(
      `File does not exist. Note: your current working directory is ${folder}.`,
    );
  }
  const lines = text.split("\n");
  const startLine = typeof a.offset === "number" ? Math.max(1, a.offset) : 1;
  const limit = typeof a.limit === "number" ? a.limit : lines.length;
  const shown = lines.slice(startLine - 1, startLine - 1 + limit);
  return {
    type: "text",
    file: {
      filePath,
      content: shown.join("\n"),
      numLines: shown.length,
      startLine,
      totalLines: lines.length,
    },
  };
}

/** `Bash {command, …}` → `{stdout, stderr, interrupted, …}`. */
async function bash(folder: string, a: Record<string, unknown>) {
  if (typeof a.command !== "string" || a.command === "") {
    throw new WorkspaceToolError("Bash needs a command (a string)");
  }
  const out = await new Deno.Command("bash", {
    args: ["-c", a.command],
    cwd: folder,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout).replace(/\n+$/, "");
  const stderr = dec.decode(out.stderr).replace(/\n+$/, "");
  if (out.code !== 0) {
    throw new WorkspaceToolError(
      `Exit code ${out.code}\n${[stdout, stderr].filter(Boolean).join("\n")}`,
    );
  }
  return {
    stdout,
    stderr,
    interrupted: false,
    isImage: false,
    noOutputExpected: false,
  };
}

/** `Write {file_path, content}` → `{type: "create"|"update", …}`. */
async function write(folder: string, a: Record<string, unknown>) {
  const filePath = await inside(folder, a.file_path, "Write");
  if (typeof a.content !== "string") {
    throw new WorkspaceToolError("Write needs content (a string)");
  }
  const before = await readOrNull(filePath);
  await Deno.mkdir(dirname(filePath), { recursive: true });
  await Deno.writeTextFile(filePath, a.content);
  return {
    type: before === null ? "create" : "update",
    filePath,
    content: a.content,
    structuredPatch: [],
    originalFile: before,
    userModified: false,
  };
}

/** `Edit {file_path, old_string, new_string, replace_all?}`. */
async function edit(folder: string, a: Record<string, unknown>) {
  const filePath = await inside(folder, a.file_path, "Edit");
  const { old_string: from, new_string: to } = a;
  if (typeof from !== "string" || typeof to !== "string" || from === "") {
    throw new WorkspaceToolError(
      "Edit needs old_string (not empty) and new_string (strings)",
    );
  }
  const before = await readOrNull(filePath);
  if (before === null) {
    throw new WorkspaceToolError(`File does not exist: ${filePath}`);
  }
  const count = before.split(from).length - 1;
  if (count === 0) {
    throw new WorkspaceToolError(
      `String to replace not found in file.\nString: ${from}`,
    );
  }
  const all = a.replace_all === true;
  if (count > 1 && !all) {
    throw new WorkspaceToolError(
      `Found ${count} matches of the string to replace, but replace_all is false`,
    );
  }
  const after = all ? before.replaceAll(from, to) : before.replace(from, to);
  await Deno.writeTextFile(filePath, after);
  return {
    filePath,
    oldString: from,
    newString: to,
    originalFile: before,
    structuredPatch: [],
    userModified: false,
    replaceAll: all,
  };
}

/**
 * The built-in tools over a working folder.
 *
 * @param folder The working folder (absolute; the package's `input.cwd`).
 * @returns `Read`, `Bash`, `Write` and `Edit`, each taking one arguments
 *   object.
 * @throws {WorkspaceToolError} (from a tool) A path outside the folder, a
 *   missing file, a command that failed.
 *
 * @example
 * ```ts ignore
 * const tools = builtinTools("/home/me/project");
 * ```
 */
export function builtinTools(folder: string): ToolRegistry {
  const tool = (
    fn: (folder: string, a: Record<string, unknown>) => Promise<unknown>,
  ) => declareTool((a: Record<string, unknown>) => fn(folder, a), "object");
  return {
    Read: tool(read),
    Bash: tool(bash),
    Write: tool(write),
    Edit: tool(edit),
  };
}
