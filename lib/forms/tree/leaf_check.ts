/**
 * The check of the model's call at a tree's leaf when the tree is served
 * at the model API (`gateway_driver.ts`): the leaf's action has a template
 * (`n3_Write`'s `content` with the `status:` word the model writes); every
 * part the leaf does not write must be what the conversation showed (the
 * refs resolved on the walk's blackboard), the leaf's part is the model's.
 * A refusal names what the argument must read, so the model asked again
 * can write it.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { ArgExpr } from "./tree_nodes.ts";
import type { NormToolCall } from "../../model_gateway/wire_types.ts";
import type { Refusal } from "../../model_gateway/serving.ts";
import { evalArg } from "./expressions.ts";
import type { ActionNode, PredictNode } from "./tree_requests.ts";

/** What an argument of a leaf's action must be. */
type Expected =
  | { kind: "exact"; value: unknown }
  | { kind: "pattern"; regex: RegExp; shown: string }
  | { kind: "free" };

const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * What an argument of a leaf's action must be: exact where it does not
 * depend on the leaf, a pattern where the leaf writes a part of it, free
 * where the leaf writes all of it (or it does not bind).
 */
function expected(
  expr: ArgExpr,
  at: { leaf: PredictNode; board: Record<string, unknown> },
): Expected {
  const holes = new Set(Object.values(at.leaf.outputs));
  if ("const" in expr) return { kind: "exact", value: expr.const };
  if ("ref" in expr) {
    if (holes.has(expr.ref)) return { kind: "free" };
    try {
      return { kind: "exact", value: evalArg(expr, at.board) };
    } catch {
      return { kind: "free" };
    }
  }
  let pattern = "";
  let shown = "";
  let hole = false;
  let last = 0;
  for (const m of expr.template.matchAll(/\$ref\(([^)]*)\)/g)) {
    const lit = expr.template.slice(last, m.index);
    pattern += escape(lit);
    shown += lit;
    last = m.index + m[0].length;
    if (holes.has(m[1])) {
      pattern += "([\\s\\S]*?)";
      shown += "…";
      hole = true;
      continue;
    }
    let v: string;
    try {
      v = evalArg({ template: m[0] }, at.board) as string;
    } catch {
      return { kind: "free" };
    }
    pattern += escape(v);
    shown += v;
  }
  const tail = expr.template.slice(last);
  pattern += escape(tail);
  shown += tail;
  return hole
    ? { kind: "pattern", regex: new RegExp(`^${pattern}$`), shown }
    : { kind: "exact", value: shown };
}

/**
 * The model's calls of a leaf's action that contradict what the
 * conversation showed (another tool is another way, not a wrong value:
 * never refused here).
 *
 * @param at The leaf, its action, the walk's blackboard at the leaf.
 * @param calls The model's calls.
 * @returns The refusals.
 */
export function leafRefusals(
  at: {
    leaf: PredictNode;
    action: ActionNode;
    board: Record<string, unknown>;
  },
  calls: NormToolCall[],
): Refusal[] {
  const out: Refusal[] = [];
  for (const c of calls) {
    if (c.name !== at.action.tool) continue;
    if (c.arguments_text !== undefined) {
      out.push({
        id: c.id,
        tool: c.name,
        reason: `the arguments of ${c.name} are not a JSON object`,
      });
      continue;
    }
    const wrong: string[] = [];
    for (const [path, expr] of Object.entries(at.action.args)) {
      const want = expected(expr, at);
      const got = c.arguments[path];
      if (want.kind === "free") continue;
      if (want.kind === "exact") {
        if (canonicalJson(got ?? null) !== canonicalJson(want.value)) {
          wrong.push(
            `${path} must be ${
              JSON.stringify(want.value)
            } (what the conversation showed, as every training session built it)`,
          );
        }
        continue;
      }
      if (typeof got !== "string" || !want.regex.test(got)) {
        wrong.push(
          `${path} must read ${
            JSON.stringify(want.shown)
          }, where each … is yours to write (the rest is what the conversation showed, as every training session built it)`,
        );
      }
    }
    if (wrong.length) {
      out.push({ id: c.id, tool: c.name, reason: wrong.join("; ") });
    }
  }
  return out;
}
