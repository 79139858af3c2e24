import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import {
  checkStructure,
  MAX_IR_DEPTH,
  MAX_STRUCTURE_PROBLEMS,
} from "../../lib/package/structure_check.ts";
import {
  type AnyNode as IrNode,
  NODE_KINDS,
} from "../../lib/forms/form_table.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { HOSTILE, packageOf } from "./_hostile_packages.ts";
import { HANG_MS, hangGuard } from "../_wait.ts";

const CHECK = new URL("./_hostile_check.ts", import.meta.url).pathname;
/**
 * What a hostile package may cost the check, counted, not timed: at most
 * this many lookups of a node's kind per node and per child slot the
 * document lists (a sound walk makes about two; one that followed every
 * path through shared arms would make 2^30). How long the check takes is
 * `deno task bench reliability`'s to measure (`_reliability_packages.ts`),
 * not a test's.
 */
const LOOKUPS_PER_ITEM = 3;

interface Outcome {
  ms: number;
  cpu_ms: number;
  lookups: number;
  nodes: number;
  slots: number;
  accepted: boolean;
  message: string | null;
  problems: number;
}

/** One check of a hostile package in a process of its own, guarded against a hang. */
async function check(
  shape: string,
  size: number,
  via: "validatePackage" | "checkStructure" = "validatePackage",
): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-read", CHECK, shape, String(size), via],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  using _guard = hangGuard(child);
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout).trim();
  assertOk(
    out.success && text !== "",
    out.signal === "SIGKILL"
      ? `${via} of ${shape}(${size}) did not finish within ${HANG_MS} ms`
      : `${shape}(${size}): ${new TextDecoder().decode(out.stderr)}`,
  );
  return JSON.parse(text) as Outcome;
}

function refusedWithin(o: Outcome, pattern: RegExp): void {
  assertOk(!o.accepted, "the package was accepted");
  assertMatch(o.message!, pattern);
  assertOk(!/Maximum call stack/.test(o.message!), o.message!);
  withinBudget(o);
}

function acceptedWithin(o: Outcome): void {
  assertEquals(o.message, null);
  withinBudget(o);
}

/** The work is linear in the document: each node looked at a few times. */
function withinBudget(o: Outcome): void {
  assertOk(
    o.lookups <= LOOKUPS_PER_ITEM * (o.nodes + o.slots) + 8,
    `${o.lookups} kind lookups for ${o.nodes} nodes and ${o.slots} child slots (${
      Math.round(o.cpu_ms)
    } ms of CPU)`,
  );
}

Deno.test("validatePackage() takes 16 and 200 chained branches whose cases all lead to the next, each node walked once", async () => {
  acceptedWithin(await check("chainedBranches", 16));
  acceptedWithin(await check("chainedBranches", 200));
});

Deno.test("validatePackage() refuses the root among its own children as a cycle", async () => {
  refusedWithin(
    await check("rootInChildren", 0),
    /structure: node root is its own descendant \(root → root\): the IR must be a tree, without cycles/,
  );
});

Deno.test("validatePackage() refuses a cycle below the root, naming its path", async () => {
  refusedWithin(
    await check("cycleBelowRoot", 0),
    /node x is its own descendant \(x → y → z → x\)/,
  );
});

Deno.test("validatePackage() refuses 5,000 nested sequences by their depth, not with a stack overflow; 500 pass", async () => {
  refusedWithin(
    await check("nestedSequences", 5_000),
    new RegExp(
      `node q${MAX_IR_DEPTH} is nested ${
        MAX_IR_DEPTH + 1
      } deep, deeper than ${MAX_IR_DEPTH}`,
    ),
  );
  acceptedWithin(await check("nestedSequences", 500));
});

Deno.test("checkStructure() takes 200,000 actions under one sequence, validatePackage() 20,000, in work linear in their size", async () => {
  acceptedWithin(await check("wideSequence", 200_000, "checkStructure"));
  acceptedWithin(await check("wideSequence", 20_000));
});

Deno.test("validatePackage() refuses a node under two parents (2^30 paths through shared arms), each node walked once", async () => {
  refusedWithin(
    await check("sharedArms", 30),
    /node b\d+ is a child of both l\d+ and r\d+: the IR must be a tree/,
  );
});

Deno.test("validatePackage() refuses a sequence listing a child twice (2^30 visits), each node walked once", async () => {
  refusedWithin(
    await check("listedTwice", 30),
    /sequence q\d+ lists q?\w+ twice/,
  );
});

Deno.test("validatePackage() finds no node in Object.prototype: a child named constructor is missing", async () => {
  refusedWithin(
    await check("prototypeChild", 0),
    /node constructor is referenced but missing/,
  );
});

Deno.test("checkStructure() lists at most 200 problems and counts the rest", () => {
  const doc = HOSTILE.wideSequence(10) as unknown as BehaviorPackage;
  for (let i = 0; i < 1_000; i++) {
    doc.ir.nodes[`lost${i}`] = { id: `lost${i}`, kind: "stop", reason: "x" };
  }
  const problems = checkStructure(doc, null, NODE_KINDS);
  assertEquals(problems.length, MAX_STRUCTURE_PROBLEMS + 1);
  assertEquals(problems[0], "node lost0 is unreachable");
  assertEquals(problems.at(-1), "… and 800 more problems");
});

Deno.test("checkStructure() still scopes each branch arm: a store one arm writes is unseen by its sibling and after the branch", () => {
  const act = (id: string, store: string, ref: string): IrNode => ({
    id,
    kind: "action",
    tool: "t",
    args: { q: { ref } },
    store,
    effect: "read",
    recovery: null,
  });
  const doc = packageOf({
    root: { id: "root", kind: "sequence", children: ["b", "after"] },
    b: {
      id: "b",
      kind: "branch",
      on: "input.text",
      cases: [{ equals: 1, then: "left" }, { equals: 2, then: "right" }],
      otherwise: "left",
    },
    left: { id: "left", kind: "sequence", children: ["w", "r1"] },
    w: act("w", "made", "input.text"),
    r1: act("r1", "x1", "made.id"),
    right: act("right", "x2", "made.id"),
    after: act("after", "x3", "made.id"),
  }, "root") as unknown as BehaviorPackage;
  assertEquals(checkStructure(doc, new Set(["t"]), NODE_KINDS), [
    "right.q: made.id reads made before anything writes it",
    "after.q: made.id reads made before anything writes it",
  ]);
  assertEquals(checkStructure(doc, new Set(["u"]), NODE_KINDS).length, 6);
});
