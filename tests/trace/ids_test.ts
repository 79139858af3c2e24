import { assertEquals, assertThrows } from "../_assert.ts";
import { InvalidIdError, isValidId, validateId } from "../../lib/trace/ids.ts";

Deno.test("validateId() accepts host session ids and harness ids", () => {
  for (
    const id of [
      "6186e4fd-8209-48a2-a8dd-8390b7ffa6cc",
      "ses_4f1c2e0a9ffeYl0q",
      "cap_2026-11-22.a",
      "_capture",
      "x".repeat(128),
    ]
  ) {
    assertEquals(validateId("capture", id), id);
  }
});

Deno.test("validateId() rejects anything that could escape the root", () => {
  for (
    const bad of [
      "",
      "..",
      "a/b",
      "a\\b",
      "../etc",
      "a..b",
      ".hidden",
      "-flag",
      "x".repeat(129),
      "sp ace",
      "nul\0",
      "é",
      42,
      null,
    ]
  ) {
    assertThrows(() => validateId("capture", bad), InvalidIdError);
    assertEquals(isValidId(bad), false);
  }
});

Deno.test("InvalidIdError says which id and what is allowed", () => {
  const err = assertThrows(() => validateId("episode", "a/b")) as Error;
  assertEquals(err instanceof TypeError, true);
  assertEquals(/episode id "a\/b"/.test(err.message), true);
  assertEquals(/A-Z a-z 0-9 _ \. -/.test(err.message), true);
});
