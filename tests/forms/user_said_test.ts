import { assertEquals } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { learnBindings } from "../../lib/forms/agent/bindings.ts";
import { buildAgentForm } from "../../lib/forms/agent/build_agent_form.ts";
import { AgentEngine } from "../../lib/forms/agent/agent_engine.ts";
import { describeSource } from "../../lib/package/source.ts";
import { userSaid } from "./_user_said.ts";

Deno.test("dates the user writes in words bind as ISO dates of the training year, and a new phrasing is looked up", () => {
  const said = [
    ["I fly on May 20th.", "2024-05-20"],
    ["Anything on 21 May?", "2024-05-21"],
    ["What about the 2nd of June", "2024-06-02"],
    ["Try 6/5 please", "2024-06-05"],
  ];
  const data = loadTauData(
    userSaid(
      "trips",
      said.map(([user, date]) => ({
        user,
        tool: "search_flights",
        args: { date },
      })),
    ),
  );
  const episodes = data.episodes.map((e) => e.norm);
  const effects = { search_flights: "read" } as const;
  const [b] = learnBindings(episodes, { effects });
  assertEquals(b.lookup.sources, [{ from: "user_date", year: 2024 }]);
  assertEquals(b.lookup.explained, 4);
  assertEquals(
    describeSource(b.lookup.sources[0]),
    "a date the user wrote in words, in 2024",
  );
  const engine = new AgentEngine(
    buildAgentForm(episodes, { effects }).compiled.ir,
  );
  engine.user("Is there a flight on the 3rd of July, or July 4?");
  assertEquals(engine.dueLookups().map((c) => c.args), [
    { date: "2024-07-03" },
    { date: "2024-07-04" },
  ]);
});

Deno.test("values users say in their own words bind as a learned table, looked up when the user says one", () => {
  const said = [
    ["I want basic economy.", "basic_economy"],
    ["Put me in BASIC ECONOMY again", "basic_economy"],
    ["First class, please", "first_class"],
  ];
  const data = loadTauData(
    userSaid(
      "trips",
      said.map(([user, cabin]) => ({
        user,
        tool: "quote_fare",
        args: { cabin },
      })),
    ),
  );
  const episodes = data.episodes.map((e) => e.norm);
  const effects = { quote_fare: "read" } as const;
  const [b] = learnBindings(episodes, { effects });
  assertEquals(b.lookup.sources, [{
    from: "user_word",
    values: ["basic_economy", "first_class"],
  }]);
  const engine = new AgentEngine(
    buildAgentForm(episodes, { effects }).compiled.ir,
  );
  engine.user("Is first class free?");
  assertEquals(engine.dueLookups().map((c) => c.args), [
    { cabin: "first_class" },
  ]);
});
