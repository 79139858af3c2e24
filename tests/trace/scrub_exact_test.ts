import { assertEquals } from "../_assert.ts";
import {
  exactForms,
  scrubExactEvents,
  scrubFormsEvents,
} from "../../lib/trace/scrub_exact.ts";
import { message } from "../../lib/trace/mod.ts";
import { fixedContext } from "../_helpers.ts";

Deno.test("scrubFormsEvents with a key's forms scrubs as scrubExactEvents does", () => {
  const key = "selfhosted-7c1f0e22";
  const ctx = fixedContext("cap_s");
  const events = [
    message(ctx, { role: "user", text: `my key is ${key}, twice: ${key}` }),
    message(ctx, { role: "user", text: "nothing here" }),
    message(ctx, {
      role: "user",
      text: JSON.stringify({ k: `"${key}"` }) +
        ` ?key=${encodeURIComponent(key)}`,
    }),
  ];
  const byForms = scrubFormsEvents(events, exactForms([key]));
  assertEquals(byForms, scrubExactEvents(events, [key]));
  assertEquals(byForms[0].payload, {
    role: "user",
    text: "my key is [REDACTED:client_key], twice: [REDACTED:client_key]",
    redactions: { client_key: 2 },
  });
  // An event with no occurrence is the same event.
  assertEquals(byForms[1] === events[1], true);
  assertEquals(scrubFormsEvents(events, []), events);
});
