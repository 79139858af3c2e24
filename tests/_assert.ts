/**
 * Assertion names used across the tests, over `node:assert/strict`.
 *
 * @module
 */
import assert from "node:assert/strict";

/** Deep strict equality. */
export const assertEquals: <T>(
  actual: unknown,
  expected: T,
  message?: string,
) => asserts actual is T = assert.deepStrictEqual;
/** Deep strict inequality. */
export const assertNotEquals: (
  actual: unknown,
  expected: unknown,
  message?: string,
) => void = assert.notDeepStrictEqual;
/** A string matches a pattern. */
export const assertMatch: (
  value: string,
  pattern: RegExp,
  message?: string,
) => void = assert.match;
/** Truthiness. */
export const assertOk: (value: unknown, message?: string) => asserts value =
  assert.ok;

/**
 * Assert that a function throws, optionally an instance of a class or with a
 * message matching a pattern, and return the error.
 *
 * @param fn The function.
 * @param expected Error class or message pattern.
 * @returns The thrown error.
 */
export function assertThrows(
  fn: () => unknown,
  // deno-lint-ignore no-explicit-any
  expected?: (new (...args: any[]) => Error) | RegExp,
): Error {
  try {
    fn();
  } catch (err) {
    check(err, expected);
    return err as Error;
  }
  throw new assert.AssertionError({
    message: "Expected the function to throw",
  });
}

/**
 * Async version of {@linkcode assertThrows}.
 *
 * @param fn The async function.
 * @param expected Error class or message pattern.
 * @returns The thrown error.
 */
export async function assertRejects(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  expected?: (new (...args: any[]) => Error) | RegExp,
): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    check(err, expected);
    return err as Error;
  }
  throw new assert.AssertionError({
    message: "Expected the promise to reject",
  });
}

function check(
  err: unknown,
  // deno-lint-ignore no-explicit-any
  expected?: (new (...args: any[]) => Error) | RegExp,
): void {
  if (expected instanceof RegExp) {
    assert.match(String((err as Error)?.message ?? err), expected);
  } else if (expected) {
    assert.ok(
      err instanceof expected,
      `Expected ${expected.name}, got ${(err as Error)?.name}: ${
        (err as Error)?.message
      }`,
    );
  }
}
