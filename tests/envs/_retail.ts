/**
 * Shared helpers for the τ² retail environment tests: the vendored fixtures
 * and a check for τ²'s refusal messages.
 *
 * @module
 */
import { assertEquals, assertThrows } from "../_assert.ts";
import { type RetailDb, RetailToolError } from "../../eval/envs/tau2/mod.ts";

const FIX = new URL("../../fixtures/", import.meta.url);
export const dbText = Deno.readTextFileSync(
  new URL("tau2_retail_db.json", FIX),
);
export const slicePath = new URL("tau2_retail_slice.json", FIX).pathname;
export const slice = JSON.parse(Deno.readTextFileSync(slicePath));
export const match = JSON.parse(
  Deno.readTextFileSync(new URL("tau2_retail_slice_task_match.json", FIX)),
);
export const freshDb = (): RetailDb => JSON.parse(dbText);

/** A call that τ² refuses with exactly this message. */
export function refused(fn: () => unknown, message: string): void {
  const err = assertThrows(fn, RetailToolError);
  assertEquals(err.message, message);
}
