import { assertEquals, assertOk } from "../_assert.ts";
import { maskUrlCredentials } from "../../lib/trace/mask_url.ts";

Deno.test("maskUrlCredentials() masks the password of every URL shape and keeps the rest", () => {
  const cases: [string, string][] = [
    [
      "http://user:pw@127.0.0.1:4318/v1/traces",
      "http://user:***@127.0.0.1:4318/v1/traces",
    ],
    ["https://u:p@ss@host/x", "https://u:***@host/x"],
    ["postgres://harness:hunter2@[bad/x", "postgres://harness:***@[bad/x"],
    ["postgres//user:pw@host/db", "postgres//user:***@host/db"],
    ["postgres:/user:pw@host/db", "postgres:/user:***@host/db"],
    ["user:pw@host/db", "user:***@host/db"],
    ["redis://:s3cret@cache:6379", "redis://:***@cache:6379"],
    ["ftp://u:a/b@host/file", "ftp://u:***@host/file"],
    [
      "error sending request for url (http://me:pw@h:1/v1/traces): refused",
      "error sending request for url (http://me:***@h:1/v1/traces): refused",
    ],
    [
      "https://h/v1/traces?api_key=K1&x=1&token=T2#f",
      "https://h/v1/traces?api_key=***&x=1&token=***#f",
    ],
  ];
  for (const [given, want] of cases) {
    assertEquals(maskUrlCredentials(given), want, given);
  }
});

Deno.test("maskUrlCredentials() leaves text without credentials as it is", () => {
  for (
    const text of [
      "http://127.0.0.1:4318/v1/traces",
      "mail me at a@b.example",
      "http://h/a:b@c is a path",
      "at 12:30 the run ended",
    ]
  ) {
    assertEquals(maskUrlCredentials(text), text);
  }
  assertOk(!maskUrlCredentials("x http://a:hunter2@h y").includes("hunter2"));
});

Deno.test("maskUrlCredentials() masks a password that starts with a slash", () => {
  assertEquals(maskUrlCredentials("http://u:/pw@h/x"), "http://u:***@h/x");
});
