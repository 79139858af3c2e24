/**
 * Comparing a secret a request carried with the expected one, in constant
 * time.
 *
 * @module
 */

/**
 * Compare two secrets in time that does not depend on where they differ.
 *
 * @param given What the request carried.
 * @param expected The secret.
 * @returns Whether they are equal.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i];
  return diff === 0;
}
