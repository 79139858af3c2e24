/**
 * The capability module `compile.ts run` takes for packages compiled from
 * Claude Code sessions: Claude Code's built-in tools over a working folder
 * (`builtin_tools.ts`) and the run's input (`cwd`: the folder's real path, as the
 * sessions' working directory was; `text`: the request, when given after
 * the folder). The residual leaves are answered by `--model`.
 *
 * `Bash` runs `bash -c`, which `deno task run` does not grant: run it with
 * `deno run` and the permissions named (read of the checkout and the
 * folder, write of the folder, `bash`, the model's host):
 *
 * ```sh
 * deno run --allow-read --allow-write=/path/to/folder --allow-run=bash \
 *   --allow-net=127.0.0.1,api.anthropic.com --allow-env=ANTHROPIC_API_KEY,ANTHROPIC_BASE_URL \
 *   compile.ts run dataflow.package.json \
 *   --capabilities examples/claude_code/workspace_capabilities.ts \
 *   --model anthropic/claude-sonnet-4-5 --input "Lab scenario dataflow: …" \
 *   -- /path/to/folder
 * ```
 *
 * @module
 */
import { resolve } from "node:path";
import type { ToolRegistry } from "../../lib/runtime/runtime_types.ts";
import { builtinTools } from "./builtin_tools.ts";

export { builtinTools, WorkspaceToolError } from "./builtin_tools.ts";

/** What this module gives a run. */
export interface WorkspaceCapabilities {
  /** The run's input: the working folder and, when given, the request. */
  input: { cwd: string; text?: string };
  /** Read, Bash, Write, Edit over the folder. */
  tools: ToolRegistry;
}

/**
 * The capabilities of a run in a working folder.
 *
 * @param options `args` from `compile.ts run … -- FOLDER [REQUEST…]`: the
 *   folder (default: the current directory) and the request's words (or
 *   give the request with `--input`).
 * @returns Input and tools.
 * @throws {TypeError} When the folder is not a directory.
 *
 * @example
 * ```ts ignore
 * const caps = createCapabilities({ args: ["/home/me/project"] });
 * ```
 */
export function createCapabilities(
  options: { episode?: number; args?: string[] } = {},
): WorkspaceCapabilities {
  const [folder = Deno.cwd(), ...words] = options.args ?? [];
  let cwd = resolve(folder);
  let dir = false;
  try {
    cwd = Deno.realPathSync(cwd);
    dir = Deno.statSync(cwd).isDirectory;
  } catch { /* reported below */ }
  if (!dir) {
    throw new TypeError(
      `The working folder "${cwd}" is not a directory: give the folder the package works in after "--"`,
    );
  }
  return {
    input: { cwd, ...(words.length ? { text: words.join(" ") } : {}) },
    tools: builtinTools(cwd),
  };
}
