/**
 * Which conversations a served package applies to (`applies_to.ts`): the
 * rule from the training sessions' openings, and the check of a
 * conversation's opening against it.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import {
  describeAppliesTo,
  openingMisfit,
  openingOf,
  openingRule,
} from "../../lib/package/applies_to.ts";

Deno.test("openingRule(): one text when every session opened with it, a word template when they share words in place, else any (with why)", () => {
  const same = openingRule(["Write the  report.", " Write the report.\n"]);
  assertEquals(same, {
    opening: "same_text",
    text: "Write the report.",
    sessions: 2,
  });
  assertEquals(openingRule(["Ship ORD-1 today", "Ship ORD-2 today"]), {
    opening: "word_template",
    words: ["Ship", null, "today"],
    sessions: 2,
  });
  const lengths = openingRule([
    "Hi, return my order",
    "Cancel it please now ok",
  ]);
  assertEquals(lengths.opening, "any");
  assertOk(/different lengths/.test(describeAppliesTo(lengths)));
  assertEquals(openingRule(["a b", "c d"]).opening, "any");
  assertEquals(openingRule(["a b", null]).opening, "any");
  assertEquals(openingRule([]).opening, "any");
});

Deno.test("openingMisfit(): the same text whitespace aside, the template word for word, any for any and for packages without a rule", () => {
  const same = openingRule(["Write the report.", "Write the report."]);
  assertEquals(openingMisfit(same, "Write  the report.\n"), null);
  assertOk(
    /does not open as the 2 training sessions did \("Write the report\."\)/
      .test(openingMisfit(same, "Write the summary.") ?? ""),
  );
  assertOk(openingMisfit(same, null) !== null);
  const tpl = openingRule(["Ship ORD-1 today", "Ship ORD-2 today"]);
  assertEquals(openingMisfit(tpl, "Ship ORD-9 today"), null);
  assertOk(openingMisfit(tpl, "Ship ORD-9 tomorrow") !== null);
  assertOk(openingMisfit(tpl, "Ship ORD-9 today please") !== null);
  assertEquals(openingMisfit(openingRule(["a b", "c d"]), "anything"), null);
  assertEquals(openingMisfit(undefined, "anything"), null);
});

Deno.test("openingOf(): the first user message with words (tool results and the system prompt aside)", () => {
  assertEquals(
    openingOf([
      { role: "system", text: "You are an agent." },
      { role: "user", text: "" },
      { role: "user", text: "Do it." },
      { role: "user", text: "And more." },
    ]),
    "Do it.",
  );
  assertEquals(openingOf([{ role: "system", text: "x" }]), null);
});
