/**
 * What the model is told of a choice argument the user may also write:
 * the candidates the user did not write (theirs are in the conversation),
 * at most MAX_NAMED_CANDIDATES, and how many more the results hold; the
 * check still takes every candidate.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { AgentEngine } from "../../lib/forms/agent/agent_engine.ts";
import { MAX_NAMED_CANDIDATES } from "../../lib/forms/agent/choice_check.ts";
import type { BehaviorIr } from "../../lib/package/ir.ts";

const IR = {
  schema_version: "harness.ir.v1",
  root: "agent",
  nodes: {
    agent: {
      id: "agent",
      kind: "agent",
      lookups: [],
      choice: "choice",
      fanout: 5,
    },
    choice: {
      id: "choice",
      kind: "choice",
      signature: "choice",
      tools: [{
        tool: "ship",
        effect: "write",
        args: [{
          path: "city",
          sources: [
            { from: "user_text" },
            { from: "result", tool: "cities", path: ["[*]"] },
          ],
        }],
      }],
    },
  },
} as unknown as BehaviorIr;

Deno.test("choice candidates in words leave out what the user wrote and name at most a dozen", () => {
  const engine = new AgentEngine(IR);
  const cities = Array.from({ length: 20 }, (_, i) => `City${i + 10}`);
  engine.user("Ship it to City10 please");
  engine.record({
    tool: "cities",
    args: {},
    ok: true,
    result: JSON.stringify(cities),
  }, "model");
  const shown = engine.choiceCandidates().ship.city as string;
  assertOk(typeof shown === "string", String(shown));
  assertOk(!shown.includes("City10"), shown);
  const named = cities.slice(1, 1 + MAX_NAMED_CANDIDATES);
  assertEquals(
    shown,
    `text the user wrote, or one of ${named.join(", ")}, or one of ${
      19 - MAX_NAMED_CANDIDATES
    } more in the results above`,
  );
  // Every candidate still passes the check, named or not; no other value.
  for (const c of cities) {
    assertEquals(engine.check("ship", { city: c }).ok, true);
  }
  assertEquals(engine.check("ship", { city: "Atlantis" }).ok, false);
});
