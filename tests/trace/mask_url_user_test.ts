import { assertEquals } from "../_assert.ts";
import { maskUrlCredentials } from "../../lib/trace/mask_url.ts";

Deno.test("maskUrlCredentials() masks a user name that stands alone in a URL, a token's place", () => {
  const cases: [string, string][] = [
    ["http://user@host/", "http://***@host/"],
    [
      "https://ghp_abc123@github.com/o/r.git",
      "https://***@github.com/o/r.git",
    ],
    ["postgres//harness@db:5432/x", "postgres//***@db:5432/x"],
    [
      "push failed (https://tok@127.0.0.1:4318/v1/traces): refused",
      "push failed (https://***@127.0.0.1:4318/v1/traces): refused",
    ],
    // A password beside it: the name stays, the password goes (unchanged).
    ["http://user:pw@host/", "http://user:***@host/"],
  ];
  for (const [given, want] of cases) {
    assertEquals(maskUrlCredentials(given), want, given);
  }
});

Deno.test("maskUrlCredentials() leaves mail addresses and scp-style git remotes in a message", () => {
  const text = "mail me@example.com about git@github.com:o/r.git";
  assertEquals(maskUrlCredentials(text), text);
  assertEquals(maskUrlCredentials("http://host/a@b"), "http://host/a@b");
});
