/**
 * One depth guard where every value is serialized (issue 35, item 13): a
 * value nested past `MAX_CANONICAL_DEPTH` (a package constant 20,000 levels
 * deep) is a `RangeError` naming the limit, never "Maximum call stack size
 * exceeded".
 */
import {
  assertEquals,
  assertMatch,
  assertOk,
  assertThrows,
} from "../_assert.ts";
import {
  canonicalJson,
  MAX_CANONICAL_DEPTH,
} from "../../lib/trace/canonical_json.ts";
import { validatePackage } from "../../lib/forms/validate_package.ts";

function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = i % 2 ? { a: v } : [v];
  return v;
}

Deno.test("canonicalJson() names the depth limit for a value 20,000 levels deep and writes one at the limit", () => {
  const err = assertThrows(() => canonicalJson(nested(20_000)), RangeError);
  assertMatch(err.message, /nested deeper than 1000 levels, the limit/);
  // Unsorted keys take the slow path: the same limit there.
  const unsorted = { b: 1, a: nested(20_000) };
  assertMatch(
    assertThrows(() => canonicalJson(unsorted), RangeError).message,
    /deeper than 1000 levels/,
  );
  const atLimit = nested(MAX_CANONICAL_DEPTH);
  assertEquals(canonicalJson(atLimit), JSON.stringify(atLimit));
});

Deno.test("validatePackage() refuses a package constant 20,000 levels deep naming the depth limit", () => {
  const doc = {
    schema_version: "harness.package.v1",
    digest: "sha256:" + "0".repeat(64),
    ir: {
      root: "n1",
      nodes: {
        n1: {
          id: "n1",
          kind: "action",
          tool: "refund",
          args: { amount: { const: nested(20_000) } },
        },
      },
    },
  };
  const err = assertThrows(() => validatePackage(doc), RangeError);
  assertMatch(err.message, /nested deeper than 1000 levels, the limit/);
  assertOk(!/call stack/.test(err.message), err.message);
});
