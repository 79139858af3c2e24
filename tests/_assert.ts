/**
 * Assertion names used across the tests, over `node:assert/strict`.
 *
 * @module
 */
import assert from "node:assert/strict";

// Declared as functions over `node:assert/strict` (not assigned from it):
// its typings differ when an npm package brings `@types/node` into the
// type graph (the message is then `string` only with rest arguments).

/**
 * Deep strict equality.
 *
 * @param actual What came.
 * @param expected What should have.
 * @param message Said when they differ.
 */
export function assertEquals<T>(
  actual: unknown,
  expected: T,
  message?: string,
): asserts actual is T {
  if (message === undefined) assert.deepStrictEqual(actual, expected);
  else assert.deepStrictEqual(actual, expected, message);
}

/**
 * Deep strict inequality.
 *
 * @param actual What came.
 * @param expected What it should not be.
 * @param message Said when they are equal.
 */
export function assertNotEquals(
  actual: unknown,
  expected: unknown,
  message?: string,
): void {
  if (message === undefined) assert.notDeepStrictEqual(actual, expected);
  else assert.notDeepStrictEqual(actual, expected, message);
}

/**
 * A string matches a pattern.
 *
 * @param value The string.
 * @param pattern The pattern.
 * @param message Said when it does not match.
 */
export function assertMatch(
  value: string,
  pattern: RegExp,
  message?: string,
): void {
  if (message === undefined) assert.match(value, pattern);
  else assert.match(value, pattern, message);
}

/**
 * Truthiness.
 *
 * @param value The value.
 * @param message Said when it is falsy.
 */
export function assertOk(value: unknown, message?: string): asserts value {
  if (message === undefined) assert.ok(value);
  else assert.ok(value, message);
}

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
