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
}

/** Object keys whose string values are always redacted (rule `secret_field`). */
export const SECRET_KEY_PATTERN: RegExp =
  /^(api[_-]?key|apikey|x-api-key|authorization|proxy-authorization|password|passwd|secret|client[_-]?secret|token|access[_-]?token|refresh[_-]?token|id[_-]?token|private[_-]?key|cookie|set-cookie)$/i;

/** The default rule set. */
export const DEFAULT_REDACTION_RULES: readonly RedactionRule[] = [
  {
    name: "private_key",
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  },
  {
    name: "bearer_token",
    pattern: /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g,
    keepGroup: 1,
  },
  {
    name: "env_assignment",
    pattern:
      /\b([A-Za-z0-9_]*(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Za-z0-9_]*\s*=\s*)(?:"[^"\n]*"|'[^'\n]*'|[^\s"'`;&|]+)/g,
    keepGroup: 1,
  },
  { name: "anthropic_key", pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { name: "openai_key", pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}/g },
  { name: "aws_access_key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  {
    name: "github_token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
  },
  { name: "slack_token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { name: "google_api_key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
];

/** Counts of redactions by rule name. */
export type RedactionCounts = Record<string, number>;

/**
 * Redact every string inside a value.
 *
 * @param value Any JSON value.
 * @param rules The rule set.
 * @returns The redacted value (unchanged parts shared) and counts by rule.
 */
export function redactValue<T>(
  value: T,
  rules: readonly RedactionRule[] = DEFAULT_REDACTION_RULES,
): { value: T; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  const out = walk(value, rules, counts);
  return { value: out as T, counts };
}

function walk(
  value: unknown,
  rules: readonly RedactionRule[],
  counts: RedactionCounts,
): unknown {
  if (typeof value === "string") return redactString(value, rules, counts);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = walk(v, rules, counts);
      if (r !== v) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    let r: unknown;
    if (typeof v === "string" && v !== "" && SECRET_KEY_PATTERN.test(k)) {
      counts.secret_field = (counts.secret_field ?? 0) + 1;
      r = "[REDACTED:secret_field]";
    } else r = walk(v, rules, counts);
    if (r !== v) changed = true;
    out[k] = r;
  }
  return changed ? out : value;
}

function redactString(
  text: string,
  rules: readonly RedactionRule[],
  counts: RedactionCounts,
): string {
  let out = text;
  for (const rule of rules) {
    rule.pattern.lastIndex = 0;
    if (!rule.pattern.test(out)) continue;
    rule.pattern.lastIndex = 0;
    out = out.replace(rule.pattern, (...m: unknown[]) => {
      counts[rule.name] = (counts[rule.name] ?? 0) + 1;
      const keep = rule.keepGroup ? String(m[rule.keepGroup] ?? "") : "";
      return `${keep}[REDACTED:${rule.name}]`;
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
