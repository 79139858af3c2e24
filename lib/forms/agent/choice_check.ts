/**
 * The agent form's choice leaf at run time: the values each restricted
 * argument of a choice tool may take in a conversation (as checked and as
 * shown to the model), and the check of a state-changing call the model
 * chose against them. `AgentEngine` (`agent_engine.ts`) keeps the
 * conversation these read.
 *
 * @module
 */
import type { BoundArg, ChoiceTool } from "./agent_nodes.ts";
import {
  allows,
  candidatesOf,
  type ConversationState,
  valueKey,
} from "./sources.ts";
import { argumentLeafList, generalArgPath } from "./call_leaves.ts";
import { sameNamedArg } from "./choice_leaf.ts";

/** The verdict on a proposed state-changing call. */
export type ChoiceCheck =
  | { ok: true }
  | { ok: false; reason: string };

/** What a restricted argument of a choice tool may take now. */
export interface ChoiceValue {
  /** The enumerated candidates. */
  values: unknown[];
  /** The user's text is a source too. */
  text: boolean;
  /** Some source takes values from the data (results, arguments, words). */
  data: boolean;
}

/** Most candidates named in words beside "text the user wrote". */
export const MAX_NAMED_CANDIDATES = 12;

/**
 * An argument's candidates as shown to the model. The user's text admits
 * values no list can hold: the model is told, not given an enum it could
 * not leave; of the other candidates it is told those the user did not
 * write (the user's words are in the conversation already), at most
 * {@linkcode MAX_NAMED_CANDIDATES}, and how many more the results above
 * hold (the check still takes every candidate). An argument that also takes
 * values from the data has no candidate until the data is in the
 * conversation (the tool is not offered before).
 */
function shownCandidates(
  c: ChoiceValue | null,
  userSaid: (value: unknown) => boolean,
): unknown[] | string {
  if (c === null) return "free text";
  if (!c.text || (c.data && c.values.length === 0)) return c.values;
  const rest = c.values.filter((v) => !userSaid(v));
  if (!rest.length) return "text the user wrote";
  const named = rest.slice(0, MAX_NAMED_CANDIDATES).map((v) =>
    typeof v === "string" ? v : JSON.stringify(v)
  ).join(", ");
  const more = rest.length - MAX_NAMED_CANDIDATES;
  return `text the user wrote, or one of ${named}${
    more > 0 ? `, or one of ${more} more in the results above` : ""
  }`;
}

/**
 * The candidate values of every argument of every choice tool, as shown to
 * the model (`user_text` and free arguments as such).
 *
 * @param values What each argument may take ({@linkcode choiceValuesOf}).
 * @param user The user messages so far.
 * @returns Tool → argument path → values or a note.
 */
export function shownChoiceCandidates(
  values: Record<string, Record<string, ChoiceValue | null>>,
  user: readonly string[],
): Record<string, Record<string, unknown[] | string>> {
  const said = user.join("\n");
  const userSaid = (v: unknown) =>
    (typeof v === "string" || typeof v === "number") && String(v) !== "" &&
    said.includes(String(v));
  const out: Record<string, Record<string, unknown[] | string>> = {};
  for (const [tool, args] of Object.entries(values)) {
    out[tool] = {};
    for (const [path, c] of Object.entries(args)) {
      out[tool][path] = shownCandidates(c, userSaid);
    }
  }
  return out;
}

/**
 * The values each restricted argument of each choice tool may take in a
 * conversation: the enumerated candidates, whether the user's text is a
 * source too, and whether any source takes values from the data (null: a
 * free argument).
 *
 * @param tools The tools the choice leaf may pick.
 * @param state The conversation so far.
 * @returns Tool → argument path → candidates.
 */
export function choiceValuesOf(
  tools: readonly ChoiceTool[],
  state: ConversationState,
): Record<string, Record<string, ChoiceValue | null>> {
  const out: Record<string, Record<string, ChoiceValue | null>> = {};
  for (const t of tools) {
    const args: Record<string, ChoiceValue | null> = {};
    for (const a of t.args) {
      if (a.sources === null) {
        args[a.path] = null;
        continue;
      }
      const vals = new Map<string, unknown>();
      for (const s of a.sources) {
        for (const v of candidatesOf(s, state)) vals.set(valueKey(v), v);
      }
      args[a.path] = {
        values: [...vals.values()],
        text: a.sources.some((s) => s.from === "user_text"),
        data: a.sources.some((s) => s.from !== "user_text"),
      };
    }
    out[t.tool] = args;
  }
  return out;
}

/** A state-changing call the model chose. */
export interface ProposedCall {
  /** Tool. */
  tool: string;
  /** Arguments. */
  args: Record<string, unknown>;
}

/** What {@linkcode checkChoice} checks a call against. */
export interface ChoiceContext {
  /** The tools the choice leaf offers. */
  tools: readonly ChoiceTool[];
  /** State-changing tools training never made, checked by argument name. */
  unseen: readonly { tool: string; effect: string }[];
  /** The conversation so far. */
  state: ConversationState;
}

/**
 * Check a state-changing call the model chose: the tool must be one the
 * choice leaf offers (or one training never made, checked by argument
 * name), and every argument value must be allowed by its sources in the
 * current state.
 *
 * @param call The tool and its arguments.
 * @param context The choice leaf's tools and the conversation.
 * @returns ok, or why not.
 */
export function checkChoice(
  call: ProposedCall,
  context: ChoiceContext,
): ChoiceCheck {
  const { tool, args } = call;
  const unseen = context.unseen.find((t) => t.tool === tool);
  const spec = unseen
    ? {
      tool,
      effect: unseen.effect,
      args: [
        ...new Set(argumentLeafList(args).map((l) => generalArgPath(l.path))),
      ].map((path) => sameNamedArg(context.tools, path)),
    }
    : context.tools.find((t) => t.tool === tool);
  if (!spec) {
    return {
      ok: false,
      reason:
        `${tool} is not a choice this package offers (training never made it with restricted arguments)`,
    };
  }
  if (
    unseen?.effect === "destructive" &&
    !spec.args.some((a) => a.sources !== null)
  ) {
    return {
      ok: false,
      reason:
        `${tool}: training never made this destructive tool, and none of its arguments can be checked against what it learned`,
    };
  }
  const byPath = new Map<string, BoundArg>(spec.args.map((a) => [a.path, a]));
  for (const { path, value } of argumentLeafList(args)) {
    const a = byPath.get(generalArgPath(path));
    if (!a) {
      return {
        ok: false,
        reason: `${tool}: argument ${path} was never seen in training`,
      };
    }
    if (a.sources === null) {
      if (unseen?.effect !== "destructive") continue;
      return {
        ok: false,
        reason:
          `${tool}: training never made this destructive tool, and no tool it made has an argument ${path} to check the value against`,
      };
    }
    if (!a.sources.some((s) => allows(s, { state: context.state, value }))) {
      return {
        ok: false,
        reason: `${tool}: ${path} = ${
          JSON.stringify(value)
        } is not among its candidates`,
      };
    }
  }
  return { ok: true };
}
