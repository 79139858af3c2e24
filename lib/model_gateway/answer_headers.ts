/**
 * The headers the model gateway adds to its answers, by name, for clients
 * that read them: the episode an answer was recorded under (so a client can
 * mark outcomes), and what a served package did.
 *
 * @module
 */

/** Response headers of the model gateway. */
export const ANSWER_HEADERS = {
  /** The episode the exchange is recorded under (every recorded answer). */
  episode: "x-harness-episode",
  /** `package`: the package answered itself (or gave up in words). */
  served: "x-harness-served",
  /** The package that answered (`name@digest`). */
  package: "x-harness-package",
  /** How many answers of the model the package refused before giving up. */
  refused: "x-harness-refused",
  /** Why the package did not fit the request (forwarded untouched). */
  skipped: "x-harness-package-skipped",
} as const;
