/**
 * The model gateway's upstreams from `serve`'s flags and environment: for
 * each upstream of the registry (`lib/model_gateway/wires/registry.ts`:
 * `openai`, `anthropic`, `gemini` …), `--upstream-<name> URL`, else
 * `HARNESS_UPSTREAM_<NAME>`, else the provider's public API, written as its
 * SDK's base URL; and the network grant the deno tasks give for them
 * (`ingest.ts gateway net`), so a task grants exactly the upstreams named.
 *
 * @module
 */
import type { ModelGatewayOptions } from "../model_gateway/options.ts";
import {
  upstreamEnv,
  upstreamFlag,
  UPSTREAMS,
} from "../model_gateway/wires/registry.ts";
import { UsageError } from "./io.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

/** The environment variable that names each upstream, by its name. */
export const UPSTREAM_ENV: Readonly<Record<string, string>> = Object
  .fromEntries(UPSTREAMS.map((u) => [u.name, upstreamEnv(u)]));

/** The `serve` flags of the upstreams (`upstream-openai` …). */
export const UPSTREAM_FLAGS: readonly string[] = UPSTREAMS.map(upstreamFlag);

/** The flags and environment `serve` reads the upstreams from. */
export interface UpstreamSources {
  /** `--upstream-<name>` given, by the upstream's name. */
  given: Record<string, string | undefined>;
  /** `--upstream-timeout`, in ms. */
  timeoutMs?: number;
  /** Reads a granted environment variable. */
  env: (name: string) => string | undefined;
  /** Told when a default upstream cannot be reached from this process. */
  warn?: (message: string) => void;
}

/**
 * Parse an upstream base URL.
 *
 * @param url As given.
 * @param flag The flag or variable, for the message.
 * @returns The URL.
 * @throws {UsageError} Saying what to give instead.
 */
export function parseUpstream(url: string, flag: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(
      `${flag} takes the API's base URL as its SDK writes it (${
        UPSTREAMS.map((u) => u.default).join(", ")
      }, http://127.0.0.1:8000/v1), not ${
        JSON.stringify(maskUrlCredentials(url))
      }`,
    );
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new UsageError(`${flag} takes an http(s) URL, not ${u.protocol}`);
  }
  if (u.username || u.password) {
    throw new UsageError(
      `${flag} must not carry credentials in the URL (${u.protocol}//***@${u.host}): clients send their own key, which the gateway passes on`,
    );
  }
  return u;
}

/**
 * The upstreams `serve` forwards to, checked against this process's
 * network permission.
 *
 * @param s Flags and environment.
 * @param own The server's own address (`host:port`), which an upstream must not be.
 * @returns The gateway's options.
 * @throws {UsageError} For a bad URL, a loop, or a host this process may not reach.
 */
export function upstreamOptions(
  s: UpstreamSources,
  own: string,
): ModelGatewayOptions {
  const pick = (which: string, fallback: string) => {
    const flag = `--upstream-${which}`;
    const given = s.given[which] ?? s.env(UPSTREAM_ENV[which]);
    const u = parseUpstream(given ?? fallback, given ? flag : fallback);
    if (u.host === own || (u.port && `localhost:${u.port}` === own)) {
      throw new UsageError(
        `${flag} ${u.origin} is this server: the gateway would forward to itself. Name the provider's URL`,
      );
    }
    const hostPort = `${u.hostname}:${
      u.port || (u.protocol === "https:" ? "443" : "80")
    }`;
    const state = Deno.permissions.querySync({ name: "net", host: hostPort })
      .state;
    if (state !== "granted" && !given) {
      // The default upstream, not granted (e.g. `deno task ingest serve`):
      // the server runs; that route answers 502 saying why.
      s.warn?.(
        `model gateway: this process may not connect to ${u.host}, so ${
          flag.slice(11)
        } requests will get 502; use "deno task serve" or --allow-net=${u.host}`,
      );
    } else if (state !== "granted") {
      throw new UsageError(
        `This process may not connect to ${u.host}: set ${
          UPSTREAM_ENV[which]
        }=${u.origin}${u.pathname} where you run "deno task serve" (the task grants the upstreams that the environment names), or run deno with --allow-net=${u.host}`,
      );
    }
    return u.href.replace(/\/$/, "");
  };
  return {
    upstreams: Object.fromEntries(
      UPSTREAMS.map((u) => [u.name, pick(u.name, u.default)]),
    ),
    ...(s.timeoutMs !== undefined ? { upstreamTimeoutMs: s.timeoutMs } : {}),
  };
}

/**
 * For the deno tasks: `,host:port,host:port` of the upstreams the
 * environment names (or the public APIs), to append to `--allow-net`.
 *
 * @param env Reads an environment variable.
 * @returns The grant, or nothing when a URL cannot be read.
 *
 * @example
 * ```ts
 * import { upstreamNetGrant } from "./upstreams.ts";
 * import { equal } from "node:assert/strict";
 * equal(upstreamNetGrant(() => undefined), ",api.openai.com:443,api.anthropic.com:443,generativelanguage.googleapis.com:443");
 * const env = (n: string) =>
 *   n === "HARNESS_UPSTREAM_OPENAI" ? "http://10.1.2.3:8000/v1" : undefined;
 * equal(upstreamNetGrant(env), ",10.1.2.3:8000,api.anthropic.com:443,generativelanguage.googleapis.com:443");
 * ```
 */
export function upstreamNetGrant(
  env: (name: string) => string | undefined,
): string {
  let out = "";
  for (const u of UPSTREAMS) {
    const [name, fallback] = [upstreamEnv(u), u.default];
    try {
      const u = new URL(env(name) || fallback);
      if (!/^[A-Za-z0-9.\-\[\]:]+$/.test(u.hostname)) continue;
      const port = u.port || (u.protocol === "https:" ? "443" : "80");
      out += `,${u.hostname}:${port}`;
    } catch {
      // A bad URL grants nothing; serve says what is wrong with it.
    }
  }
  return out;
}
