/**
 * Test helper for the installer tests: CLI output sinks that drop everything.
 *
 * @module
 */

/** Output sinks for `install`, `uninstall` and `main` that print nothing. */
export const quiet = { out: () => {}, err: () => {} };
