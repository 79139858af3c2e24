/**
 * The adapters by host, keyed by the seed's host names (`host_a`, …, the
 * records' `source.host`); `lib/trace/hosts.ts` maps those to the hosts'
 * real names.
 *
 * @module
 */
import type { HostAdapter } from "./common.ts";
import { hostAToEvents } from "./claude_code.ts";
import { hostBToEvents } from "./gemini_cli.ts";
import { hostCToEvents } from "./opencode.ts";
import { type Host, HOST_TABLE, hostByName } from "../trace/hosts.ts";

/** The seed's names of the hosts with an adapter (`host_a`, `host_b`, `host_c`). */
export const HOSTS: readonly HostName[] = HOST_TABLE.map((h) => h.seed);

/** A host's seed name (`host_a`, `host_b`, `host_c`). */
export type HostName = Host["seed"];

const ADAPTERS: Record<HostName, HostAdapter> = {
  host_a: hostAToEvents,
  host_b: hostBToEvents,
  host_c: hostCToEvents,
};

/**
 * The adapter of a host.
 *
 * @param host The host's seed name (`host_a`) or real name (`claude-code`).
 * @returns Its `toEvents`, or undefined for an unknown host.
 */
export function adapterFor(host: string): HostAdapter | undefined {
  const h = hostByName(host);
  return h ? ADAPTERS[h.seed] : undefined;
}
