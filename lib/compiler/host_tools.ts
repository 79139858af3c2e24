/**
 * The built-in tools of each recorded host and what they do to the world:
 * `host_a` (Claude Code), `host_b` (Gemini CLI), `host_c` (OpenCode). Names
 * are as the hosts send them in their hook payloads (`tool_name`, `tool`;
 * see `fixtures/hosts/*` and `lib/adapters/`); MCP tools are not here (their
 * servers annotate them). A shell runs anything, so it is destructive; file
 * edits and sub-agents change state; search, reading and fetching only read.
 *
 * @module
 */

/** Host → built-in tool name → effect. */
export const HOST_TOOL_EFFECTS: Readonly<
  Record<string, Readonly<Record<string, string>>>
> = Object.freeze({
  // Claude Code.
  host_a: Object.freeze({
    Read: "read",
    Grep: "read",
    Glob: "read",
    LS: "read",
    WebFetch: "read",
    WebSearch: "read",
    BashOutput: "read",
    Edit: "write",
    MultiEdit: "write",
    Write: "write",
    NotebookEdit: "write",
    TodoWrite: "write",
    Agent: "write",
    Task: "write",
    Bash: "destructive",
    KillShell: "destructive",
  }),
  // Gemini CLI.
  host_b: Object.freeze({
    read_file: "read",
    read_many_files: "read",
    list_directory: "read",
    glob: "read",
    search_file_content: "read",
    google_web_search: "read",
    web_fetch: "read",
    write_file: "write",
    replace: "write",
    save_memory: "write",
    write_todos: "write",
    run_shell_command: "destructive",
  }),
  // OpenCode.
  host_c: Object.freeze({
    read: "read",
    grep: "read",
    glob: "read",
    list: "read",
    webfetch: "read",
    websearch: "read",
    codesearch: "read",
    todoread: "read",
    write: "write",
    edit: "write",
    patch: "write",
    multiedit: "write",
    todowrite: "write",
    task: "write",
    bash: "destructive",
  }),
});

/**
 * The effect of a host's built-in tool.
 *
 * @param host The events' `source.host` (`host_a`, `host_b`, `host_c`).
 * @param tool The tool's name as the host sent it.
 * @returns `read`, `write` or `destructive`; null when it is not a built-in of that host.
 */
export function hostToolEffect(host: string, tool: string): string | null {
  const tools = Object.hasOwn(HOST_TOOL_EFFECTS, host)
    ? HOST_TOOL_EFFECTS[host]
    : null;
  return tools && Object.hasOwn(tools, tool) ? tools[tool] : null;
}
