import { assertEquals } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { learnBindings } from "../../lib/forms/agent/bindings.ts";
import { buildAgentForm } from "../../lib/forms/agent/build_agent_form.ts";
import { AgentEngine } from "../../lib/forms/agent/agent_engine.ts";
import { candidatesOf } from "../../lib/forms/agent/sources.ts";
import { userSaid } from "./_user_said.ts";

Deno.test("booking codes of many shapes bind as one class of capitals and digits, and a new shape is looked up", () => {
  const data = loadTauData(
    userSaid(
      "trips",
      ["8JX2WO", "ABC123", "Q7Z9PL", "HATHAT"].map((code) => ({
        user: `Hi, my booking is ${code}, is it paid?`,
        tool: "get_booking",
        args: { booking_id: code },
      })),
    ),
  );
  const episodes = data.episodes.map((e) => e.norm);
  const effects = { get_booking: "read" } as const;
  const [b] = learnBindings(episodes, { effects });
  assertEquals(b.lookup.sources, [
    { from: "user", shape: "[A9]{6}", latest: true },
  ]);
  assertEquals(b.lookup.explained, 4);
  const form = buildAgentForm(episodes, { effects });
  const engine = new AgentEngine(form.compiled.ir);
  engine.user("Please check ZZ4PQ1 for me, thanks.");
  assertEquals(engine.dueLookups().map((c) => c.args), [
    { booking_id: "ZZ4PQ1" },
  ]);
  // The class takes codes of its length only, with a capital.
  assertEquals(
    candidatesOf({ from: "user", shape: "[A9]{6}" }, {
      user: ["JFK to SEA, code AB12CD, zip 123456, ref ABCD1234"],
      calls: [],
    }),
    ["AB12CD"],
  );
});
