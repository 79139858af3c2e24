/**
 * One template from the episodes' own templates of an argument, when they
 * agree on every ref and differ only in some words of their literal text:
 * `order $ref(…order_id)\n…\nstatus: covered\n` in one session,
 * `…\nstatus: insufficient\n` in another. Each run of words that differs
 * becomes a ref when one source gives it in every episode (`EUR`, `CHF`:
 * the order's `currency`, a value lineage does not attribute on its own
 * because it is a plain word), else a hole the model fills (`covered` or
 * `insufficient`: nothing recorded before the call says which). The rest
 * of the argument stays bound to the earlier results, so the model writes
 * only what no result determines, never the whole argument, and never a
 * constant learned from the data.
 *
 * @module
 */
import { comparePaths, findAllSources } from "../../lineage/find_source.ts";
import type { SignatureField } from "../../package/ir.ts";
import { safe, type SkeletonContext, type Trie } from "./skeleton.ts";

/** Most holes one argument may have (past it, the model writes it all). */
export const MAX_TEMPLATE_HOLES = 2;

/** A part of the merged template that the model writes. */
export interface TemplateHole {
  /** The variable the template reads (`val_<node>_<arg>_<k>`). */
  variable: string;
  /** The leaf's output name (`<arg>_<k>`). */
  output: string;
  /** Its output field (a string, described in words). */
  field: SignatureField;
}

/** A merged template and its holes. */
export interface MergedTemplate {
  /** The template (`$ref(…)` for refs and holes alike). */
  template: string;
  /** The holes, in order. */
  holes: TemplateHole[];
}

/** What the members passed for one argument, as the skeleton sees it. */
export interface TemplateSeen {
  /** Argument path. */
  path: string;
  /** Per member: its value and its lineage with stores renamed. */
  seen: {
    m: Trie["members"][number];
    value: unknown;
    renamed: string | null;
  }[];
}

const REF = /\$ref\(([^)]*)\)/g;
const RUN = /[A-Za-z0-9_]+|[^A-Za-z0-9_]+/g;

function split(template: string): { lits: string[]; refs: string[] } {
  const lits: string[] = [];
  const refs: string[] = [];
  let last = 0;
  for (const m of template.matchAll(REF)) {
    lits.push(template.slice(last, m.index));
    refs.push(m[1]);
    last = m.index + m[0].length;
  }
  lits.push(template.slice(last));
  return { lits, refs };
}

/** Common leading and trailing runs of words and separators. */
function aligned(
  texts: string[],
): { prefix: string; suffix: string; middles: string[] } {
  const runs = texts.map((t) => t.match(RUN) ?? []);
  const min = Math.min(...runs.map((r) => r.length));
  let pre = 0;
  while (pre < min && runs.every((r) => r[pre] === runs[0][pre])) pre++;
  let suf = 0;
  while (
    suf < min - pre &&
    runs.every((r) =>
      r[r.length - 1 - suf] === runs[0][runs[0].length - 1 - suf]
    )
  ) suf++;
  return {
    prefix: runs[0].slice(0, pre).join(""),
    suffix: runs[0].slice(runs[0].length - suf).join(""),
    middles: runs.map((r) => r.slice(pre, r.length - suf).join("")),
  };
}

/** A path that holds each member's part on its board, the same for all. */
function sharedSource(
  ctx: SkeletonContext,
  a: TemplateSeen,
  middles: string[],
): string | null {
  let common = findAllSources(middles[0], ctx.boardOf(a.seen[0].m));
  for (let i = 1; i < a.seen.length && common.length; i++) {
    const found = new Set(findAllSources(middles[i], ctx.boardOf(a.seen[i].m)));
    common = common.filter((p) => found.has(p));
  }
  return common.sort(comparePaths)[0] ?? null;
}

function mostCommon(refs: string[]): string {
  const counts = new Map<string, number>();
  for (const r of refs) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].sort((a, b) =>
    b[1] - a[1] || comparePaths(a[0], b[0])
  )[0][0];
}

function crop(text: string, end: "head" | "tail"): string {
  const t = end === "tail" ? text.slice(-24) : text.slice(0, 24);
  return JSON.stringify(t);
}

/**
 * Merge the members' templates of an argument (see the module notes).
 *
 * @param ctx The staticizer's state.
 * @param at The trie node, the action's node id and what its members passed.
 * @returns The template and its holes, or null when the members' lineages
 *   are not all templates with the same refs in the same order, a differing
 *   run is empty in some member, there would be more than
 *   {@linkcode MAX_TEMPLATE_HOLES} holes, or the template does not give
 *   back every member's value.
 */
export function mergedTemplate(
  ctx: SkeletonContext,
  at: { trie: Trie; nodeId: string; seen: TemplateSeen },
): MergedTemplate | null {
  const { trie: t, nodeId, seen: a } = at;
  // One shared lineage is sharedRef's to take or refuse (contested).
  if (
    t.members.length < 2 || new Set(a.seen.map((x) => x.renamed)).size < 2
  ) return null;
  if (
    !a.seen.every((x) =>
      typeof x.value === "string" && x.renamed?.includes("$ref(")
    )
  ) return null;
  const parts = a.seen.map((x) => split(x.renamed!));
  const n = parts[0].refs.length;
  if (!parts.every((p) => p.refs.length === n)) return null;
  // Where members' refs differ (a balance equal to the amount is found in
  // the order first), the most common one; the last check below makes
  // sure it gives every member's value.
  const refs = parts[0].refs.map((_, i) =>
    mostCommon(parts.map((p) => p.refs[i]))
  );
  const safePath = safe(a.path);
  let template = "";
  const holes: TemplateHole[] = [];
  const fills: Record<string, string>[] = a.seen.map(() => ({}));
  for (let i = 0; i < parts[0].lits.length; i++) {
    const texts = parts.map((p) => p.lits[i]);
    if (texts.every((x) => x === texts[0])) template += texts[0];
    else {
      const { prefix, suffix, middles } = aligned(texts);
      if (middles.some((m) => m === "")) return null;
      const src = sharedSource(ctx, a, middles);
      if (src !== null) template += `${prefix}$ref(${src})${suffix}`;
      else {
        const k = holes.length + 1;
        const variable = `val_${nodeId}_${safePath}_${k}`;
        const shown = [...new Set(middles)].sort().slice(0, 5)
          .map((m) => JSON.stringify(m)).join(" or ");
        holes.push({
          variable,
          output: `${safePath}_${k}`,
          field: {
            type: "string",
            description:
              `part of ${t.tool} argument ${a.path}: the text between ${
                crop(prefix, "tail")
              } and ${
                crop(suffix, "head")
              }; the recorded sessions wrote ${shown} there`,
          },
        });
        middles.forEach((m, j) => fills[j][variable] = m);
        template += `${prefix}$ref(${variable})${suffix}`;
      }
    }
    if (i < refs.length) template += `$ref(${refs[i]})`;
  }
  if (holes.length > MAX_TEMPLATE_HOLES) return null;
  const gives = a.seen.every((x, j) =>
    ctx.sameAt({ ...ctx.boardOf(x.m), ...fills[j] }, template, x.value)
  );
  return gives ? { template, holes } : null;
}
