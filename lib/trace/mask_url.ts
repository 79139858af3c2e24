/**
 * Masking the credentials URLs carry, for everything shown or stored for
 * display: status pages, `/health`, error messages, state files.
 *
 * @module
 */

/** What a masked credential shows instead. */
export const MASK = "***";

/** Query parameters whose values are credentials (compared lowercased). */
const SECRET_PARAMS =
  "access_token|api_key|apikey|api-key|auth|client_secret|key|pass|passwd|password|pwd|secret|sig|signature|token|x-amz-signature|x-goog-signature";

// `user:password@` after `//`, a `scheme:`, or the start of a word. The
// password may hold `:` and `/`, and `@` when another `@` follows before
// the path (`u:p@ss@host`); a host must follow the last `@`.
const USERINFO = new RegExp(
  String.raw`([a-z][a-z0-9+.-]*:\/{0,2}|^|[\s"'(<=,;]|\/\/)` +
    String
      .raw`([^\s"'<>/?#@:]*):(?!\/\/)((?:[^\s"'<>@]|@(?=[^\s"'<>/?#]*@))*)@` +
    String.raw`(?=[^\s"'<>/?#@]*[^\s"'<>@/?#])`,
  "gi",
);
// A user name alone, `//user@host`: only after `//`, so that a mail address
// (`me@example.com`) or an scp-style `git@host:repo` in a message stays.
const USER_ONLY = new RegExp(
  String.raw`(\/\/)([^\s"'<>/?#@:]+)@(?=[^\s"'<>/?#@]*[^\s"'<>@/?#])`,
  "gi",
);
const QUERY_SECRET = new RegExp(
  String.raw`([?&;](?:${SECRET_PARAMS})=)[^&#\s"'<>;]+`,
  "gi",
);

/**
 * Mask every credential in the URLs a text holds, whatever their scheme or
 * shape: the password of `scheme://user:password@host` (also when `://` is
 * mistyped, `postgres//user:pw@host`, or missing, `user:pw@host`) and the
 * values of credential query parameters (`?token=`, `&password=`, `sig=` …).
 * Beside a password, the user name and host stay: they say which account
 * and server were meant.
 *
 * A user name alone (`https://user@host/`) is treated as a credential and
 * masked whole (`https://***@host/`): that is where a bearer token goes when
 * a URL carries one (`https://ghp_…@github.com/…`,
 * `https://<token>@host`), and a URL cannot tell a name from a token. Only
 * after `//`: a mail address or `git@host:repo` in a message is no URL
 * credential and stays.
 *
 * @param text A URL, or a message that may hold URLs.
 * @returns The text with each credential replaced by `***`.
 * @example
 * ```ts
 * import { maskUrlCredentials } from "./mask_url.ts";
 * import { equal } from "node:assert/strict";
 * equal(
 *   maskUrlCredentials("http://me:pw@127.0.0.1:4318/v1/traces?token=t"),
 *   "http://me:***@127.0.0.1:4318/v1/traces?token=***",
 * );
 * ```
 */
export function maskUrlCredentials(text: string): string {
  return text
    .replace(
      USERINFO,
      (whole, before: string, user: string, password: string) =>
        password === "" && user === "" ? whole : `${before}${user}:${MASK}@`,
    )
    .replace(USER_ONLY, `$1${MASK}@`)
    .replace(QUERY_SECRET, `$1${MASK}`);
}
