/**
 * The adapters by host name.
 *
 * @module
 */
import type { HostAdapter } from "./common.ts";
import { hostAToEvents } from "./host_a.ts";
import { hostBToEvents } from "./host_b.ts";
import { hostCToEvents } from "./host_c.ts";

/** Host names with an adapter. */
export const HOSTS = ["host_a", "host_b", "host_c"] as const;

/** A host name with an adapter. */
export type HostName = typeof HOSTS[number];

/**
 * The adapter of a host.
 *
 * @param host Host name.
 * @returns Its `toEvents`, or undefined for an unknown host.
 */
export function adapterFor(host: string): HostAdapter | undefined {
  switch (host) {
    case "host_a":
      return hostAToEvents;
    case "host_b":
      return hostBToEvents;
    case "host_c":
      return hostCToEvents;
    default:
      return undefined;
  }
}
