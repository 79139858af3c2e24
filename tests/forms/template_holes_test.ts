/**
 * Templates with holes (`lib/forms/tree/skeleton_template.ts`): where the
 * episodes' templates of an argument agree on every ref and differ in some
 * words, the differing words become a ref when one source gives them, else
 * a hole a model leaf fills; replay reads the recorded part back
 * (`partOf`).
 */
import { assertEquals } from "../_assert.ts";
import { partOf } from "../../lib/forms/tree/recorded_choice.ts";

Deno.test("partOf() reads the part a template's variable stands for, literal text taken literally, other refs as short as the value allows", () => {
  const template =
    "a $ref(x.y) (b+c)? $ref(v) [d] $ref(w)$ref(z.q)\nend $ref(v2)\n";
  assertEquals(
    partOf({
      template,
      variable: "v",
      value: "a 1 (b+c)? two words [d] ww zz\nend last\n",
    }),
    "two words",
  );
  assertEquals(
    partOf({
      template,
      variable: "v2",
      value: "a 1 (b+c)? two words [d] ww zz\nend last\n",
    }),
    "last",
  );
  // A value the template cannot give: no part.
  assertEquals(
    partOf({ template, variable: "v", value: "a 1 b+c two [d] end x\n" }),
    null,
  );
  assertEquals(partOf({ template, variable: "v", value: 42 }), null);
});
