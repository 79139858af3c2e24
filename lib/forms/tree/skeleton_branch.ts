/**
 * A fork of the skeleton: a deterministic branch when an uncontested
 * predicate explains it (E3 when an arm starts with a destructive tool),
 * else a residual leaf that picks the arm; either way a stop when no case
 * matches.
 *
 * @module
 */
import {
  GRADE_ORDER,
  safe,
  type SkeletonContext,
  type Trie,
} from "./skeleton.ts";

// The arms, the fallback stop and the two ways to decide (a verified predicate, else a residual leaf) build one branch node.
/** Where {@linkcode buildBranch} builds a branch, and how it builds what follows. */
export interface BranchSite {
  /** The trie node. */
  trie: Trie;
  /** Its path. */
  at: string;
  /** Kept children. */
  children: Trie[];
  /** Stores visible here. */
  scope: Map<string, string>;
  /** Builds an arm from a child. */
  buildFrom: (t: Trie, scope: Map<string, string>) => string[];
}

/**
 * Build the branch after trie node `t` over its kept children.
 *
 * @param ctx The staticizer's state.
 * @param site The trie node, its id, the child tries, the scope, and the builder of what follows each arm.
 * @returns Node ids to add to the enclosing sequence.
 */
export function buildBranch(
  ctx: SkeletonContext,
  site: BranchSite,
): string[] {
  const { trie: t, at, children, scope, buildFrom } = site;
  const branchId = `b${ctx.actions}_${safe(t.tool)}`;
  const ids: string[] = [];
  const childName = (c: Trie) => c.tool;
  const wanted = new Set(children.map(childName));
  // Uncontested predicates at this point whose mapping reaches exactly these arms.
  const preds = ctx.candidates.filter((c) =>
    c.type === "predicate" && c.key[1] === at && c.status !== "contested" &&
    (c.claim.mapping as { next: string }[]).every((m) => wanted.has(m.next)) &&
    new Set((c.claim.mapping as { next: string }[]).map((m) => m.next))
        .size === wanted.size
  ).sort((a, b) =>
    GRADE_ORDER.indexOf(b.grade) - GRADE_ORDER.indexOf(a.grade) ||
    (a.claim.mapping as unknown[]).length -
      (b.claim.mapping as unknown[]).length ||
    String(a.key[2]).length - String(b.key[2]).length
  );
  const destructive = children.some((c) =>
    ctx.effects[c.tool] === "destructive"
  );
  const pred = preds.find((p) => !destructive || p.grade === "E3");
  const arms = children.map((c) => {
    const seqId = `s_${branchId}_${safe(c.tool)}`;
    ctx.nodes[seqId] = {
      id: seqId,
      kind: "sequence",
      children: buildFrom(c, new Map(scope)),
    };
    ctx.provenanceOf(
      seqId,
      [],
      c.members,
      `arm taken by ${c.members.length} episodes`,
      "structural",
    );
    return {
      name: childName(c),
      tool: c.tool,
      id: seqId,
      members: c.members,
    };
  });
  const stopId = `x_${branchId}`;
  ctx.nodes[stopId] = {
    id: stopId,
    kind: "stop",
    reason: `no verified case at ${branchId}: stop rather than guess`,
  };
  ctx.provenanceOf(stopId, [], t.members, "fallback of a branch", "structural");
  let on: string;
  let cases: { equals: unknown; then: string }[];
  if (pred) {
    // Field `<tool>#<k>.a.b` → the skeleton store of that step on this path.
    const field = String(pred.key[2]);
    const [stepName, ...rest] = field.split(".");
    const m = t.members[0];
    const idx = ctx.names[m.ep].indexOf(stepName);
    const skStore = ctx.storeMaps[m.ep].get(ctx.cores[m.ep][idx].step.store!)!;
    on = [skStore, ...rest].join(".");
    cases = (pred.claim.mapping as { value: unknown; next: string }[]).map((
      x,
    ) => ({
      equals: x.value,
      then: arms.find((a) => a.name === x.next)!.id,
    }));
    ctx.provenanceOf(
      branchId,
      [pred],
      t.members,
      `${field} decides between ${[...wanted].join(" and ")}`,
    );
  } else {
    const variable = `arm_${branchId}`;
    const leafId = ctx.addSignature(
      branchId,
      {
        inputs: Object.fromEntries([["request", "input.text"], ...scope]),
        outputs: {
          action: {
            variable,
            field: { type: "string", enum: arms.map((a) => a.tool) },
          },
        },
        purpose: `choose the next action: ${
          arms.map((a) => a.tool).join(" or ")
        }`,
        decides: { kind: "arm", node: branchId },
      },
      t.members,
      preds,
      preds.length
        ? `a predicate explains the fork but is ${
          preds[0].grade
        }: an arm with a destructive tool needs E3`
        : "no uncontested predicate explains the fork",
    );
    ids.push(leafId);
    on = variable;
    cases = arms.map((a) => ({ equals: a.tool, then: a.id }));
  }
  ctx.nodes[branchId] = {
    id: branchId,
    kind: "branch",
    on,
    cases,
    otherwise: stopId,
  };
  ids.push(branchId);
  return ids;
}
