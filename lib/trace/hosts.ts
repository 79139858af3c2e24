/**
 * The agent hosts the harness records, by every name they go by: the one
 * table that maps the seed's names to the hosts' real ones. Everything that
 * reads or prints a host name reads it here.
 *
 * | seed (wire) | real name     | display     |
 * |-------------|---------------|-------------|
 * | `host_a`    | `claude-code` | Claude Code |
 * | `host_b`    | `gemini-cli`  | Gemini CLI  |
 * | `host_c`    | `opencode`    | OpenCode    |
 *
 * The seed's names are wire names and stay: a record's `source.host`, the
 * hook path `/hook/host_a`, the fixtures' folders. The real names are what
 * users read and type: the command line (`ingest.ts install claude-code`),
 * its output, the docs, and the alias routes `/hook/claude-code`, which
 * record exactly what `/hook/host_a` records.
 *
 * @example Any spelling to the seed's name, and back to what users read
 * ```ts
 * import { hostByName } from "./hosts.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(hostByName("claude-code")?.seed, "host_a");
 * strictEqual(hostByName("host_a")?.name, "claude-code");
 * strictEqual(hostByName("Gemini")?.display, "Gemini CLI");
 * strictEqual(hostByName("proxy"), undefined);
 * ```
 *
 * @module
 */

/** One host: its seed (wire) name, its real name, its name in prose. */
export interface Host {
  /** The seed's name: `source.host` of its records, `/hook/<seed>`. */
  readonly seed: "host_a" | "host_b" | "host_c";
  /** Its real name, as users type it: the command line, `/hook/<name>`. */
  readonly name: "claude-code" | "gemini-cli" | "opencode";
  /** Its name in prose ("Claude Code"). */
  readonly display: string;
  /** Other spellings the command line takes (`claude`). */
  readonly also: readonly string[];
}

/** The hosts, in the seed's order (`host_a`, `host_b`, `host_c`). */
export const HOST_TABLE: readonly Host[] = Object.freeze(
  [
    Object.freeze({
      seed: "host_a",
      name: "claude-code",
      display: "Claude Code",
      also: Object.freeze(["claude"]),
    }),
    Object.freeze({
      seed: "host_b",
      name: "gemini-cli",
      display: "Gemini CLI",
      also: Object.freeze(["gemini"]),
    }),
    Object.freeze({
      seed: "host_c",
      name: "opencode",
      display: "OpenCode",
      also: Object.freeze([]),
    }),
  ] as const,
);

/**
 * The host a word names: its seed name, its real name or another spelling
 * the command line takes, in any case.
 *
 * @param word `host_a`, `claude-code`, `claude`, …
 * @returns The host, or undefined when the word names none.
 */
export function hostByName(word: string): Host | undefined {
  const w = word.toLowerCase();
  return HOST_TABLE.find((h) =>
    h.seed === w || h.name === w || h.also.includes(w)
  );
}

/**
 * What users read for a `source.host`: a host's real name, any other
 * source (`gateway`, `proxy`, `runtime`) as it is.
 *
 * @param source A record's `source.host`.
 * @returns `claude-code` for `host_a`; `proxy` for `proxy`.
 */
export function hostLabel(source: string): string {
  return HOST_TABLE.find((h) => h.seed === source)?.name ?? source;
}
