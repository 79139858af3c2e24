import { assertOk, assertThrows } from "../_assert.ts";
import { resolveDbTarget } from "../../lib/team/db_target.ts";

Deno.test("resolveDbTarget() never echoes the password of a URL typed without ://", () => {
  for (
    const bad of [
      "postgres//user:hunter2@host/db",
      "postgres:/user:hunter2@host/db",
      "user:hunter2@host/db",
    ]
  ) {
    const err = assertThrows(() =>
      resolveDbTarget(bad, { env: () => undefined })
    );
    assertOk(
      !(err as Error).message.includes("hunter2"),
      (err as Error).message,
    );
    assertOk((err as Error).message.includes("user:***@host"));
  }
});
