/**
 * Where an argument value of a lookup or a choice may come from in a
 * conversation (the `sources` of a `BoundArg` in the IR), and its
 * short text form. The candidate values a source offers are computed by the
 * agent form (`lib/forms/agent/sources.ts`).
 *
 * A source is one of:
 * - `result`: a leaf of an earlier successful call's result, by tool and
 *   generalized path (`["orders", "[*]"]`; `*` for any key of an object
 *   keyed by ids, `[*]` for any list item); optionally only leaves `where`
 *   a sibling field (or, `*`, the leaf's own key) names something the user
 *   mentioned;
 * - `arg`: an argument of an earlier call, by tool and path;
 * - either of those, in a lookup, optionally `with` another argument of
 *   the same call: only from the call (and, where both sit in items of
 *   one list, the item) that gave the value chosen for that argument (a
 *   flight's number with its own date, not every number with every date);
 * - `user`: a word of a user message whose shape (or code class,
 *   `[A9]{6}`) was seen in training,
 *   optionally the word right `after` the word bound to another argument
 *   of the same call, optionally behind a constant `prefix` of punctuation
 *   (the user wrote `W123`, the tool takes `#W123`), optionally from the
 *   `latest` user message only;
 * - `user_date`: a date the user wrote in words ("May 20th", "5/20"),
 *   as an ISO date of the `year` training's values had;
 * - `user_word`: one of a table of values training saw users say in
 *   their own words ("basic economy" for `basic_economy`, "two" for 2),
 *   when the user said it;
 * - `user_text`: any text the user wrote verbatim (checked, never
 *   enumerated);
 * - `const`: a small set of values seen in training.
 *
 * @module
 */

/** A generalized path: keys, `*` (any key) and `[*]` (any item). */
export type GeneralPath = string[];

/** Where a value can come from. */
export type Source =
  | {
    from: "result";
    tool: string;
    path: GeneralPath;
    where?: string;
    with?: string;
  }
  | { from: "arg"; tool: string; path: string; with?: string }
  | {
    from: "user";
    shape: string;
    after?: string;
    prefix?: string;
    latest?: boolean;
  }
  | { from: "user_date"; year: number }
  | { from: "user_word"; values: unknown[] }
  | { from: "user_text" }
  | { from: "const"; values: unknown[] };

function withText(arg: string | undefined): string {
  return arg === undefined ? "" : `, from the same call and item as ${arg}`;
}

/** A short text form of a source, for reports and explain mode. */
export function describeSource(s: Source): string {
  switch (s.from) {
    case "result":
      return `result of ${s.tool} at ${s.path.join(".") || "(whole)"}${
        s.where === undefined
          ? ""
          : `, only for an item whose ${
            s.where === "*" ? "key" : s.where
          } the user mentions (no value when the user mentions none)`
      }${withText(s.with)}`;
    case "arg":
      return `argument ${s.path} of an earlier ${s.tool}${withText(s.with)}`;
    case "user":
      return `a user word shaped ${s.shape}${
        s.after ? ` right after ${s.after}` : ""
      }${s.prefix ? ` behind ${JSON.stringify(s.prefix)}` : ""}${
        s.latest ? " in the latest user message" : ""
      }`;
    case "user_date":
      return `a date the user wrote in words, in ${s.year}`;
    case "user_word":
      return `one of ${JSON.stringify(s.values)} the user said in words`;
    case "user_text":
      return "text the user wrote";
    case "const":
      return `one of ${JSON.stringify(s.values)}`;
  }
}
