/**
 * A tool's answer as the model API carries it (the text of a
 * `tool_result`) turned back into the value a tree-form package's store
 * holds, so that the tree served at the model API (`gateway_driver.ts`)
 * reads the same paths it learned. A package compiled from a host's hooks
 * (Claude Code's PostToolUse `tool_response`) reads paths into the hook's
 * record (`Bash_0.stdout`, `Read_1.file.content`); one compiled from the
 * gateway alone reads the text. Which one a store needs is read from the
 * IR's refs ({@linkcode storeShapes}); the host records are Claude Code's
 * (host_a), as `examples/claude_code/` and the recorded payloads in
 * `fixtures/hosts/host_a/dataflow/` have them.
 *
 * @module
 */
import type { BehaviorIr } from "../../package/ir.ts";
import { type ArgExpr, treeNodes } from "./tree_nodes.ts";

/** How a store's value is read: the answer's text, or the host's record. */
export type StoreShape = "text" | "host";

const REF = /\$ref\(([^)]*)\)/g;

function refsOf(expr: ArgExpr): string[] {
  if ("ref" in expr) return [expr.ref];
  if ("template" in expr) {
    return [...expr.template.matchAll(REF)].map((m) => m[1]);
  }
  return [];
}

/**
 * How each action's store is read by the rest of the tree (its actions'
 * arguments and branches): `host` when a ref goes into a field of it
 * (`Bash_0.stdout`), else `text`.
 *
 * @param ir A tree-form IR.
 * @returns Store → shape.
 */
export function storeShapes(ir: BehaviorIr): Map<string, StoreShape> {
  const refs: string[] = [];
  for (const n of Object.values(treeNodes(ir))) {
    if (n.kind === "action") {
      for (const e of Object.values(n.args)) refs.push(...refsOf(e));
    }
    if (n.kind === "branch") refs.push(n.on);
  }
  const out = new Map<string, StoreShape>();
  for (const n of Object.values(treeNodes(ir))) {
    if (n.kind !== "action") continue;
    const into = refs.some((r) =>
      r.startsWith(`${n.store}.`) || r.startsWith(`${n.store}[`)
    );
    out.set(n.store, into ? "host" : "text");
  }
  return out;
}

/** Claude Code's `<system-reminder>` blocks it appends to some answers. */
const REMINDER = /\n*<system-reminder>[\s\S]*?<\/system-reminder>\n*/g;

/** Read's numbered lines (`1\t…`, older versions `     1→…`) back to the file's text. */
function unnumbered(text: string): string {
  return text.split("\n").map((l) => l.replace(/^\s*\d+(\t|\u2192)/, ""))
    .join("\n");
}

/**
 * Claude Code's PostToolUse record of a call, rebuilt from the API's text
 * of its answer, for the tools whose records a tree reads (`Bash`, `Read`,
 * `Write`, `Edit`); null for another tool.
 *
 * @param tool Tool name.
 * @param args The call's arguments.
 * @param text The answer's text.
 * @returns The record, or null.
 *
 * @example
 * ```ts
 * import { claudeCodeRecord } from "./host_results.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * const r = claudeCodeRecord("Read", { file_path: "/w/a.json" }, '1\t{\n2\t  "a": 1\n3\t}\n4\t');
 * deepStrictEqual((r as { file: { content: string } }).file.content, '{\n  "a": 1\n}\n');
 * ```
 */
export function claudeCodeRecord(
  tool: string,
  args: Record<string, unknown>,
  text: string,
): unknown {
  const clean = text.replace(REMINDER, "");
  switch (tool) {
    case "Bash":
      return {
        stdout: clean,
        stderr: "",
        interrupted: false,
        isImage: false,
        noOutputExpected: false,
      };
    case "Read": {
      const content = unnumbered(clean);
      const lines = content.split("\n").length;
      const start = typeof args.offset === "number" ? args.offset : 1;
      return {
        type: "text",
        file: {
          filePath: args.file_path,
          content,
          numLines: lines,
          startLine: start,
          totalLines: lines,
        },
      };
    }
    case "Write":
      return {
        type: /updated/i.test(clean) ? "update" : "create",
        filePath: args.file_path,
        content: args.content,
      };
    case "Edit":
      return {
        filePath: args.file_path,
        oldString: args.old_string,
        newString: args.new_string,
      };
    default:
      return null;
  }
}

/**
 * The value a store holds for an answer the host sent back.
 *
 * @param at The tool, its arguments, the answer's text, the store's shape.
 * @returns The value, or null when the host's record of that tool is not
 *   known (the tree cannot read it from the API).
 */
export function storeValue(
  at: {
    tool: string;
    args: Record<string, unknown>;
    text: string;
    shape: StoreShape;
  },
): { value: unknown } | null {
  // As the gateway recorded it in training: the text as sent.
  if (at.shape === "text") return { value: at.text };
  const record = claudeCodeRecord(at.tool, at.args, at.text);
  return record === null ? null : { value: record };
}
