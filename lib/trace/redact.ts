/**
 * Secret redaction applied to hook-derived events before they are sealed.
 * Each rule names a secret shape; a match is replaced by
 * `[REDACTED:<rule>]` (keeping a harmless prefix such as `Bearer ` or
 * `NAME=`), and the event's payload gains `redactions: {<rule>: <count>}`.
 * The secret itself is never stored.
 *
 * @module
 */

/** One redaction rule. */
export interface RedactionRule {
  /** Rule name, recorded in `redactions`. */
  name: string;
  /** What to find (must have the `g` flag). */
  pattern: RegExp;
  /**
   * Index of a capture group to keep before the marker (e.g. `NAME=`).
   * @default 0 (keep nothing)
   */
  keepGroup?: number;
  /**
   * Whether a match is a credential: given the part that would be replaced
   * (the `secret` group, else the match after the kept group), false leaves
   * the match as it is, uncounted. For shapes a pattern alone cannot tell
   * from words (`Basic` credentials are base64 of `user:password`). Rules
   * read from a file have none.
   * @default every match is one
   */
  check?: (secret: string) => boolean;
  /**
   * What stands for the rule in a set's screen: a cheaper pattern that
   * matches wherever the rule could (a literal the rule needs), for rules
   * whose own pattern is slow to try at every position.
   * @default the rule's pattern
   */
  screen?: RegExp;
}

/** Object keys whose string values are always redacted (rule `secret_field`). */
export const SECRET_KEY_PATTERN: RegExp =
  /(^|[_.-])(api[_-]?key|apikey|api[_-]?token|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|session[_-]?token|token|password|passwd|pwd|passphrase|secret|secret[_-]?key|secret[_-]?access[_-]?key|client[_-]?secret|private[_-]?key|cookie|set-cookie|authorization|proxy-authorization|credentials?|account[_-]?key)$/i;

/** Words that make a name secret-bearing (in assignments, headers, query strings). */
const SECRET_NAME = String
  .raw`[A-Za-z0-9_.-]*(?:token|secret|password|passwd|pwd|passphrase|api[_-]?key|apikey|access[_-]?key|account[_-]?key|private[_-]?key|credentials?|auth[_-]?key)[A-Za-z0-9_.-]*`;

/** A value worth hiding: not empty, not a number, not a JSON literal, not already redacted. */
const SECRET_VALUE = String
  .raw`(?!\[REDACTED:)(?!(?:true|false|null|none|\d+)(?:[\s"',;&|}\]]|$))(?:"[^"\n]{3,}"|'[^'\n]{3,}'|[^\s"',;&|}\]]{3,})`;

/**
 * The default rule set: the common shapes of credentials (after the rule
 * sets of gitleaks and trufflehog: private key blocks, provider tokens,
 * JWTs, basic and bearer auth, passwords in URLs, secret-named assignments
 * in env, shell, YAML, INI and JSON text, secret headers, query parameters
 * and command flags, model providers' keys). A rule's `secret` group, when
 * it has one, is the only part replaced; ordinary ids, emails and paths are
 * left alone, and so are words after `Basic` or `Bearer` that have no
 * credential's shape.
 */
export const DEFAULT_REDACTION_RULES: readonly RedactionRule[] = [
  {
    name: "private_key",
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  {
    // A token's shape, not a word: a digit in it, or 32 characters and
    // more ("Bearer tokens expire" stays).
    name: "bearer_token",
    pattern:
      /\b(Bearer\s+)(?:(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{8,}|[A-Za-z0-9._~+/-]{32,})=*(?![A-Za-z0-9._~+/=-])/g,
    keepGroup: 1,
  },
  {
    // RFC 7617: base64 of `user:password` ("Basic scripted session" stays).
    name: "basic_auth",
    pattern: /\b(Basic\s+)[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])/g,
    keepGroup: 1,
    check: isBasicCredential,
  },
  {
    name: "url_password",
    pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"']+:(?<secret>[^\s@/"']+)@/gi,
  },
  {
    name: "jwt",
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  },
  {
    name: "json_secret",
    // Also JSON inside a JSON string, where the quotes are escaped.
    pattern: new RegExp(
      String
        .raw`(\\?"${SECRET_NAME}\\?"\s*:\s*)\\?"(?:[^"\\\n]|\\[^"]){3,}\\?"`,
      "gi",
    ),
    keepGroup: 1,
  },
  {
    name: "secret_header",
    pattern:
      /\b((?:authorization|proxy-authorization|cookie|set-cookie|x-[a-z0-9-]*(?:token|key|secret|auth)[a-z0-9-]*|api-key)\s*:\s*)(?![^\n\r"']*\[REDACTED)[^\n\r"']+/gi,
    keepGroup: 1,
  },
  {
    name: "query_secret",
    pattern:
      /([?&](?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|password|passwd|sig|signature|key)=)[^&\s#"']+/gi,
    keepGroup: 1,
  },
  {
    name: "password_flag",
    pattern:
      /((?:^|\s)--?(?:password|passwd|pass|token|secret|api-key)[= ])(?:"[^"\n]*"|'[^'\n]*'|\S+)/gi,
    keepGroup: 1,
  },
  {
    name: "password_short_flag",
    pattern: /(\b(?:mysql|mysqldump|mariadb|sshpass)\b[^\n"]*?\s-p)([^\s"]+)/gi,
    keepGroup: 1,
  },
  {
    name: "env_assignment",
    pattern: new RegExp(
      String.raw`\b(${SECRET_NAME}\s*[=:]\s*)${SECRET_VALUE}`,
      "gi",
    ),
    keepGroup: 1,
  },
  { name: "anthropic_key", pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { name: "openai_key", pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}/g },
  { name: "stripe_key", pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { name: "aws_access_key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  {
    name: "github_token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
  },
  { name: "gitlab_token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { name: "slack_token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  {
    name: "slack_webhook",
    pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g,
  },
  { name: "google_api_key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { name: "npm_token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { name: "huggingface_token", pattern: /\bhf_[A-Za-z0-9]{30,}\b/g },
  {
    name: "sendgrid_key",
    pattern: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g,
  },
  // Model providers' keys (issue 44): Groq, xAI, Perplexity, Replicate.
  { name: "groq_key", pattern: /\bgsk_[A-Za-z0-9]{40,}/g },
  { name: "xai_key", pattern: /\bxai-[A-Za-z0-9_-]{40,}/g },
  { name: "perplexity_key", pattern: /\bpplx-[A-Za-z0-9]{40,}/g },
  { name: "replicate_token", pattern: /\br8_[A-Za-z0-9_-]{30,}/g },
  {
    // Azure AI services' 84-character keys carry the signature `JQQJ9`.
    name: "azure_key",
    pattern:
      /\b[A-Za-z0-9]{52}JQQJ9[9DH][A-Za-z0-9][A-L][A-Za-z0-9]{16}[A-Za-z][A-Za-z0-9]{7}(?:[A-Za-z0-9]{2}==)?(?![A-Za-z0-9])/g,
    screen: /JQQJ9[9DH]/,
  },
  {
    // Azure's older keys are 32 hex digits, which the trace itself holds
    // too (OTLP trace ids, MD5 digests; a sha256 digest is 64): one counts
    // only within 40 characters after a label that names a key (`api-key`,
    // `subscription key`, `Azure … key`), on the same line.
    name: "azure_key",
    pattern:
      /(?:api[ _-]?key|apikey|subscription[ _-]?key|azure[^\n]{0,24}?key)[^\n]{0,40}?(?<![0-9A-Za-z])(?<secret>[0-9a-fA-F]{32})(?![0-9A-Za-z])/gi,
    screen: /api[ _-]?key|apikey|subscription[ _-]?key|azure/i,
  },
  {
    // Mistral's keys are 32 letters and digits with no prefix: one counts
    // only after "Mistral … key" (or token) on the same line, so a model
    // name beside a response id is not one.
    name: "mistral_key",
    pattern:
      /\bmistral[^\n]{0,24}?(?:key|token)[^\n]{0,40}?(?<![0-9A-Za-z])(?<secret>(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{32})(?![0-9A-Za-z])/gi,
    screen: /mistral/i,
  },
];

/**
 * Whether text after `Basic ` is an RFC 7617 credential: base64 (padded
 * to a multiple of 4) of printable text with a colon after the user.
 *
 * @param token The text after `Basic `.
 * @returns True for `dXNlcjpwYXNz` (`user:pass`), false for `scripted`.
 */
function isBasicCredential(token: string): boolean {
  if (token.length % 4 !== 0) return false;
  let text: string;
  try {
    text = atob(token);
  } catch {
    return false;
  }
  // deno-lint-ignore no-control-regex
  return text.indexOf(":") > 0 && !/[\x00-\x1f\x7f]/.test(text);
}

/**
 * A rule set ready for many values: the rules and their screen (one
 * pattern that matches wherever any rule could; see
 * {@linkcode redactionSet}). Build it once where the rules are chosen.
 */
export interface RedactionSet {
  /** The rules, in order. */
  readonly rules: readonly RedactionRule[];
  /** Matches wherever any rule could; null when the sources cannot be joined. */
  readonly screen: RegExp | null;
  /**
   * Strings the screen found nothing in lately (the screen's answer for a
   * string never changes, so a string met again is not screened again);
   * absent for none.
   */
  readonly clean?: CleanStrings;
}

/**
 * Fewest characters a string needs to be remembered as clean: short ones
 * too (roles, names, models, stop reasons: most of an event's strings), a
 * set lookup costing less than the screen's scan of even a short string.
 */
const CLEAN_MIN_CHARS = 1;
/** Most characters a string may have to be remembered as clean. */
const CLEAN_MAX_CHARS = 64 * 1024;
/** Characters remembered per generation (two generations are kept). */
const CLEAN_GENERATION_CHARS = 1024 * 1024;
/**
 * What each string remembered counts for beside its characters (its place
 * in the set): a generation holds at most ~62,000 strings however short
 * they are (~65,000 when only strings of 16 characters and more were kept).
 */
const CLEAN_ENTRY_CHARS = 16;

/**
 * A bounded memory of strings a {@linkcode RedactionSet}'s screen found
 * nothing in: what recording meets again and again (a system prompt, tool
 * descriptions and schemas, model names, a conversation's earlier turns)
 * is screened once. Two generations of at most
 * {@linkcode CLEAN_GENERATION_CHARS} characters each: a string met in the
 * older one moves to the newer, the older is let go when the newer fills.
 * Matching a string against one remembered costs its hash and one
 * comparison, against the screen's every alternative at every position.
 */
export class CleanStrings {
  #young = new Set<string>();
  #old = new Set<string>();
  #chars = 0;

  /**
   * Whether a string was remembered as clean.
   *
   * @param text The string.
   * @returns True when the screen found nothing in it lately.
   */
  has(text: string): boolean {
    if (text.length < CLEAN_MIN_CHARS || text.length > CLEAN_MAX_CHARS) {
      return false;
    }
    if (this.#young.has(text)) return true;
    if (!this.#old.has(text)) return false;
    this.add(text);
    return true;
  }

  /**
   * Remember a string the screen found nothing in.
   *
   * @param text The string.
   */
  add(text: string): void {
    if (text.length < CLEAN_MIN_CHARS || text.length > CLEAN_MAX_CHARS) return;
    const chars = text.length + CLEAN_ENTRY_CHARS;
    if (this.#chars + chars > CLEAN_GENERATION_CHARS) {
      this.#old = this.#young;
      this.#young = new Set();
      this.#chars = 0;
    }
    this.#young.add(text);
    this.#chars += chars;
  }
}

/** Counts of redactions by rule name. */
export type RedactionCounts = Record<string, number>;

/**
 * Redact every string inside a value.
 *
 * @param value Any JSON value.
 * @param rules The rules, or a {@linkcode RedactionSet} built from them once
 *   (faster for many values).
 * @returns The redacted value (unchanged parts shared) and counts by rule.
 */
export function redactValue<T>(
  value: T,
  rules: readonly RedactionRule[] | RedactionSet = DEFAULT_REDACTION_RULES,
): { value: T; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  const set = isRuleList(rules) ? redactionSet(rules) : rules;
  const pass: Pass = {
    rules: set.rules,
    screen: set.screen,
    clean: set.screen ? set.clean ?? null : null,
    counts,
  };
  const out = walk(value, pass);
  return { value: out as T, counts };
}

function isRuleList(
  r: readonly RedactionRule[] | RedactionSet,
): r is readonly RedactionRule[] {
  return Array.isArray(r);
}

/** One redaction pass: the rules, their screen, the counts so far. */
interface Pass {
  rules: readonly RedactionRule[];
  screen: RegExp | null;
  /** Strings the screen passed over lately (null: none kept). */
  clean: CleanStrings | null;
  counts: RedactionCounts;
}

/**
 * A rule set ready for many values. Its screen is one pattern that matches
 * wherever any rule could (every rule's source, or its `screen`, as an
 * alternative, named
 * groups unnamed, case folded, the rules' `s`, `m`, `u`, `v` flags kept): a
 * string it does not match is left alone after one scan instead of one per
 * rule (most strings hold no secret). When the sources cannot be joined
 * (mixed `u` and `v`, a named back-reference) the screen is null and every
 * rule scans.
 *
 * @param rules The rules.
 * @returns The set.
 */
export function redactionSet(rules: readonly RedactionRule[]): RedactionSet {
  const screen = screenOf(rules);
  return { rules, screen, ...(screen ? { clean: new CleanStrings() } : {}) };
}

function screenOf(rules: readonly RedactionRule[]): RegExp | null {
  // A back-reference to a named group would lose its group.
  if (
    rules.length < 2 ||
    rules.some((r) => (r.screen ?? r.pattern).source.includes("\\k<"))
  ) {
    return null;
  }
  const flags = new Set(["i"]);
  for (const r of rules) {
    for (const f of (r.screen ?? r.pattern).flags) {
      if ("smuv".includes(f)) flags.add(f);
    }
  }
  try {
    return new RegExp(
      rules.map((r) =>
        `(?:${
          (r.screen ?? r.pattern).source.replace(
            /(?<!\\)\(\?<([A-Za-z_$][\w$]*)>/g,
            "(?:",
          )
        })`
      ).join("|"),
      [...flags].join(""),
    );
  } catch {
    return null;
  }
}

function walk(value: unknown, pass: Pass): unknown {
  if (typeof value === "string") {
    const { screen, clean } = pass;
    if (screen === null) return redactString(value, pass.rules, pass.counts);
    if (clean !== null && clean.has(value)) return value;
    if (screen.test(value)) {
      return redactString(value, pass.rules, pass.counts);
    }
    clean?.add(value);
    return value;
  }
  if (typeof value !== "object" || value === null) return value;
  const { counts } = pass;
  // A copy is made only from the first part that changes: most values
  // hold no secret, and walking them copies nothing.
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const r = walk(v, pass);
      if (out === null && r !== v) out = value.slice(0, i);
      if (out !== null) out.push(r);
    }
    return out ?? value;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let out: Record<string, unknown> | null = null;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const v = obj[k];
    let r: unknown;
    if (
      typeof v === "string" && v !== "" && !v.startsWith("[REDACTED:") &&
      SECRET_KEY_PATTERN.test(k)
    ) {
      counts.secret_field = (counts.secret_field ?? 0) + 1;
      r = "[REDACTED:secret_field]";
    } else r = walk(v, pass);
    if (out === null && r !== v) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]] = obj[keys[j]];
    }
    if (out !== null) out[k] = r;
  }
  return out ?? value;
}

function redactString(
  text: string,
  rules: readonly RedactionRule[],
  counts: RedactionCounts,
): string {
  let out = text;
  for (const rule of rules) {
    if (rule.screen) {
      // The rule's own cheap test first (a literal it needs).
      rule.screen.lastIndex = 0;
      if (!rule.screen.test(out)) continue;
    }
    rule.pattern.lastIndex = 0;
    if (!rule.pattern.test(out)) continue;
    rule.pattern.lastIndex = 0;
    out = out.replace(rule.pattern, (...m: unknown[]) => {
      const whole = String(m[0]);
      const marker = `[REDACTED:${rule.name}]`;
      const last = m[m.length - 1];
      const groups = typeof last === "object" && last !== null
        ? last as Record<string, string | undefined>
        : null;
      if (groups?.secret !== undefined) {
        if (rule.check && !rule.check(groups.secret)) return whole;
        counts[rule.name] = (counts[rule.name] ?? 0) + 1;
        // Only the secret part goes: `postgres://app:[REDACTED]@db`.
        const at = whole.lastIndexOf(groups.secret);
        return whole.slice(0, at) + marker +
          whole.slice(at + groups.secret.length);
      }
      const keep = rule.keepGroup ? String(m[rule.keepGroup] ?? "") : "";
      if (rule.check && !rule.check(whole.slice(keep.length))) return whole;
      counts[rule.name] = (counts[rule.name] ?? 0) + 1;
      return `${keep}${marker}`;
    });
  }
  return out;
}

/**
 * Parse a JSON rule file: `[{"name": "...", "pattern": "...", "flags": "i"}]`.
 *
 * @param text File content.
 * @returns The rules (the `g` flag is always added).
 * @throws {SyntaxError} When the file is not such a list.
 */
export function parseRedactionRules(text: string): RedactionRule[] {
  const list = JSON.parse(text);
  if (!Array.isArray(list)) {
    throw new SyntaxError("A redaction rule file must hold a JSON list");
  }
  return list.map((r, i) => {
    if (typeof r?.name !== "string" || typeof r?.pattern !== "string") {
      throw new SyntaxError(
        `Redaction rule ${i} needs string "name" and "pattern"`,
      );
    }
    const flags = String(r.flags ?? "").replace(/g/g, "") + "g";
    return {
      name: r.name,
      pattern: new RegExp(r.pattern, flags),
      ...(typeof r.keep_group === "number" ? { keepGroup: r.keep_group } : {}),
    };
  });
}

/**
 * An event's payload with credential shapes redacted, and their counts
 * added to `redactions` (merged with counts an earlier pass recorded).
 *
 * @param payload The payload.
 * @param rules The rules, or a {@linkcode RedactionSet} built from them once.
 * @returns The same payload when nothing matched, else a redacted copy.
 *
 * @example
 * ```ts
 * import { redactPayload } from "./redact.ts";
 * import { deepEqual } from "node:assert/strict";
 * const p = redactPayload({ text: "Authorization: Bearer abcdefgh12345678" });
 * deepEqual(p, {
 *   text: "Authorization: Bearer [REDACTED:bearer_token]",
 *   redactions: { bearer_token: 1 },
 * });
 * ```
 */
export function redactPayload<T extends Record<string, unknown>>(
  payload: T,
  rules: readonly RedactionRule[] | RedactionSet = DEFAULT_REDACTION_RULES,
): T {
  const { value, counts } = redactValue(payload, rules);
  if (Object.keys(counts).length === 0) return payload;
  const had = (payload.redactions ?? {}) as RedactionCounts;
  const merged: RedactionCounts = { ...had };
  for (const [k, n] of Object.entries(counts)) merged[k] = (merged[k] ?? 0) + n;
  return { ...value, redactions: merged };
}
