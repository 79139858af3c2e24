/**
 * Does model traffic reach the gateway `install --gateway` pointed a host
 * at? `doctor` reads the install's record, checks the host's settings still
 * point there (and that Claude Code's `settings.local.json` does not
 * override them), and reads the server's `GET /health` `model_gateway`
 * counters into a verdict, with what to check when no request has arrived.
 * A server without `model_gateway` has no model gateway (it predates it, or
 * runs with it off): every model call the host makes then fails.
 *
 * The file reads, the requests to the server and the environment are
 * passed in ({@linkcode GatewayProbe}).
 *
 * @module
 */
import { join } from "node:path";
import { gatewayInPlace, type GatewayRecord } from "./gateway_settings.ts";
import type { Settings } from "./hook_settings.ts";
import {
  GEMINI_BASE_URL_VAR,
  geminiAuth,
  geminiEnvFile,
  parseEnvFile,
} from "./gemini_env.ts";

/** The `model_gateway` counters of `/health` that the verdict reads. */
export interface GatewayCounters {
  /** Requests on the model API routes. */
  requests: number;
  /** Exchanges recorded. */
  recorded: number;
  /** Exchanges forwarded but not recorded. */
  record_misses: number;
  /** Why the last one was not recorded. */
  last_miss?: string | null;
  /** Upstream unreachable or too slow. */
  upstream_errors: number;
  /** When the last request arrived (ISO 8601), or null. */
  last_request_at: string | null;
}

/** What `doctor` concludes about a host's model gateway. */
export interface GatewayVerdict {
  /**
   * `ok`: model calls arrive; `waiting`: none yet; `broken`: they cannot,
   * or none is recorded; `absent`: the settings no longer point at it.
   */
  state: "ok" | "broken" | "waiting" | "absent";
  /** What was seen, and what to do or check. */
  detail: string;
}

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function counters(v: unknown): GatewayCounters | null {
  if (typeof v !== "object" || v === null) return null;
  const c = v as Record<string, unknown>;
  return typeof c.requests === "number"
    ? c as unknown as GatewayCounters
    : null;
}

/**
 * Read a `/health` answer for a host whose model calls go to the server.
 *
 * @param health The parsed `/health` body.
 * @param options The server's origin (for messages), the host's uninstall
 *   name, and what to check when no request has arrived (host-specific).
 * @returns The verdict.
 *
 * @example
 * ```ts
 * import { gatewayVerdict } from "./gateway_health.ts";
 * import { strictEqual } from "node:assert/strict";
 * const v = gatewayVerdict({ ok: true }, {
 *   origin: "http://127.0.0.1:8848",
 *   host: "host_a",
 *   hints: [],
 * });
 * strictEqual(v.state, "broken");
 * ```
 */
export function gatewayVerdict(
  health: unknown,
  options: { origin: string; host: string; hints: string[] },
): GatewayVerdict & { state: "ok" | "broken" | "waiting" } {
  const { origin, host, hints } = options;
  const g = counters((health as { model_gateway?: unknown })?.model_gateway);
  if (g === null) {
    return {
      state: "broken",
      detail:
        `model gateway: the server at ${origin} has no model gateway (it predates it, or runs with it off), so the host's model calls fail — restart the server from this checkout ("ingest.ts stop", then "ingest.ts serve"), or take the gateway out ("ingest.ts uninstall ${host}")`,
    };
  }
  if (g.requests === 0) {
    return {
      state: "waiting",
      detail: `model gateway: no model request has reached ${origin} yet${
        hints.length
          ? `; if the host has run since the install, check: ${
            hints.join("; ")
          }`
          : ""
      }`,
    };
  }
  const parts = [
    `${count(g.requests, "model request")} seen by the server`,
    `${g.recorded} recorded`,
  ];
  if (g.record_misses > 0) {
    parts.push(
      `${g.record_misses} not recorded${
        g.last_miss ? ` (last: ${g.last_miss})` : ""
      }`,
    );
  }
  if (g.upstream_errors > 0) {
    parts.push(
      `${
        count(g.upstream_errors, "upstream error")
      } (provider unreachable or too slow)`,
    );
  }
  const last = g.last_request_at ? `; the last at ${g.last_request_at}` : "";
  if (g.recorded === 0 && g.record_misses > 0) {
    return {
      state: "broken",
      detail: `model gateway: ${
        parts.join(", ")
      }${last} — the calls reach the model but none was recorded`,
    };
  }
  return { state: "ok", detail: `model gateway: ${parts.join(", ")}${last}` };
}

/** What checking a gateway install reads and asks, passed in. */
export interface GatewayProbe {
  /** A file's text, or null when it cannot be read. */
  read(path: string): string | null;
  /** Parse settings text (comments allowed). */
  parse(text: string): Settings;
  /** A GET to the server (with its token, if any): status and body text; rejects when none answers. */
  get(origin: string, path: string): Promise<{ status: number; text: string }>;
  /** The environment the hosts would start from. */
  env(name: string): string | undefined;
}

/** One host's gateway install, as `doctor` finds it. */
export interface GatewayInstall {
  /** `host_a`, `host_b` or `host_c`. */
  host: "host_a" | "host_b" | "host_c";
  /**
   * The settings file the install edited (host_b: its hooks' settings; the
   * env file the install edited is named in the state file).
   */
  file: string;
  /** The install's state file (its `gateway` is the record). */
  state: string;
  /** The project folder (or home for the user level). */
  base: string;
  /** The user-level settings. */
  user: boolean;
}

/**
 * Check one host's gateway install.
 *
 * @param g Where the install is.
 * @param probe File reads, server requests, environment.
 * @returns The verdict, or null when no gateway install is recorded there.
 */
export async function checkGatewayInstall(
  g: GatewayInstall,
  probe: GatewayProbe,
): Promise<GatewayVerdict | null> {
  const record = readRecord(g.state, probe);
  if (!record) return null;
  const envFile = g.host === "host_b" ? readEnvFileName(g.state, probe) : null;
  const file = envFile ?? g.file;
  const settings = envFile !== null
    ? readEnv(envFile, probe)
    : readSettings(g.file, probe);
  if (settings === null || !gatewayInPlace(settings, record)) {
    return {
      state: "absent",
      detail:
        `model gateway: installed, but ${file} no longer sends the host's model calls to ${record.base_url} — install again with --gateway, or uninstall`,
    };
  }
  if (envFile !== null) {
    const home = probe.env("HOME");
    const reads = home === undefined ? envFile : geminiEnvFile({
      dir: g.user ? home : g.base,
      home,
      exists: (p) => probe.read(p) !== null,
    });
    if (reads !== envFile) {
      return {
        state: "broken",
        detail:
          `model gateway: Gemini CLI reads exactly one env file, and started in ${
            g.user ? "your home" : g.base
          } it reads ${
            reads ?? "none"
          }, not ${envFile} (where install set ${GEMINI_BASE_URL_VAR}): its model calls do not reach the gateway — install again with --gateway (or move the line there)`,
      };
    }
  }
  const local = g.host === "host_a" && !g.user
    ? join(g.base, ".claude", "settings.local.json")
    : null;
  const localUrl = local ? claudeBaseUrl(readSettings(local, probe)) : null;
  if (localUrl && trim(localUrl) !== record.base_url) {
    return {
      state: "broken",
      detail: `model gateway: ${local} sets env.ANTHROPIC_BASE_URL to ${
        JSON.stringify(localUrl)
      }, which wins over ${g.file}: the host's model calls do not reach the gateway — remove it there`,
    };
  }
  const origin = new URL(record.base_url).origin;
  let health: { status: number; text: string };
  try {
    health = await probe.get(origin, "/health");
  } catch {
    return {
      state: "broken",
      detail:
        `model gateway: no server answers at ${origin}, and the host sends its model calls there: it cannot reach its model until the server runs ("ingest.ts serve") or the gateway is taken out ("ingest.ts uninstall ${g.host}")`,
    };
  }
  if (health.status !== 200) {
    return {
      state: "broken",
      detail:
        `model gateway: the server at ${origin} answers /health with ${health.status}${
          health.status === 401
            ? " (it requires a bearer token: set HARNESS_INGEST_TOKEN to the server's)"
            : `: ${health.text.slice(0, 200)}`
        }`,
    };
  }
  let body: unknown = null;
  try {
    body = JSON.parse(health.text);
  } catch { /* not a harness server: read as one without a gateway */ }
  const v = gatewayVerdict(body, {
    origin,
    host: g.host,
    hints: waitingHints(g, record, probe),
  });
  if (
    v.state !== "broken" && record.capture &&
    await isCaptureFinished(
      { origin, capture: record.capture },
      probe.get,
    )
  ) {
    return {
      state: "broken",
      detail:
        `model gateway: the host's model calls are pinned to capture "${record.capture}", which is finished, so nothing more is recorded into it — install again with --gateway --capture of an open capture, or without --capture`,
    };
  }
  return v;
}

function trim(url: string): string {
  return url.replace(/\/+$/, "");
}

function readRecord(path: string, probe: GatewayProbe): GatewayRecord | null {
  const text = probe.read(path);
  if (text === null) return null;
  try {
    return (JSON.parse(text) as { gateway?: GatewayRecord }).gateway ?? null;
  } catch {
    return null;
  }
}

/** The env file a host_b gateway install edited (its state's `gemini_env.file`). */
function readEnvFileName(path: string, probe: GatewayProbe): string | null {
  try {
    const s = JSON.parse(probe.read(path) ?? "null") as {
      gemini_env?: { file?: unknown };
    } | null;
    return typeof s?.gemini_env?.file === "string" ? s.gemini_env.file : null;
  } catch {
    return null;
  }
}

function readEnv(path: string, probe: GatewayProbe): Settings | null {
  const text = probe.read(path);
  return text === null ? null : parseEnvFile(text);
}

function readSettings(path: string, probe: GatewayProbe): Settings | null {
  const text = probe.read(path);
  if (text === null) return null;
  try {
    return probe.parse(text);
  } catch {
    return null;
  }
}

/** `env.ANTHROPIC_BASE_URL` of Claude Code settings, if they set one. */
function claudeBaseUrl(settings: Settings | null): string | null {
  const env = settings?.env;
  if (typeof env !== "object" || env === null) return null;
  const url = (env as Record<string, unknown>).ANTHROPIC_BASE_URL;
  return typeof url === "string" ? url : null;
}

/** A capture on a server. */
export interface CaptureAt {
  /** The server's origin. */
  origin: string;
  /** The capture id. */
  capture: string;
}

/**
 * Whether the server lists a capture as finished (nothing more is recorded
 * into it).
 *
 * @param at The server's origin and the capture id.
 * @param get A GET to the server.
 * @returns True when finished; false when open, unknown, or it cannot tell.
 */
export async function isCaptureFinished(
  at: CaptureAt,
  get: GatewayProbe["get"],
): Promise<boolean> {
  const { origin, capture } = at;
  try {
    const list = await get(origin, "/captures");
    if (list.status !== 200) return false;
    return (JSON.parse(list.text) as { capture_id: string; status: string }[])
      .some((c) => c.capture_id === capture && c.status === "finished");
  } catch {
    return false;
  }
}

/** What to check when no model request has arrived, by host. */
function waitingHints(
  g: GatewayInstall,
  record: GatewayRecord,
  probe: GatewayProbe,
): string[] {
  const where = g.user
    ? "the host runs as this user"
    : `the host was started in ${g.base} (the project's settings apply there only)`;
  const token = probe.env("HARNESS_INGEST_TOKEN")
    ? [
      g.host === "host_c"
        ? "OpenCode starts where HARNESS_INGEST_TOKEN is set (the server takes a token; without it every model call gets 401)"
        : "the host's model calls send x-harness-token (the server takes a token; without it every model call gets 401)",
    ]
    : [];
  if (g.host === "host_b") {
    const hints = [
      `Gemini CLI was started in ${
        g.user ? "a folder with no env file of its own" : g.base
      }, a trusted folder (Gemini CLI reads no .gemini/.env in an untrusted one)`,
      ...token.map((t) =>
        t.replace(
          "send x-harness-token",
          "send x-harness-token (export GEMINI_CLI_CUSTOM_HEADERS)",
        )
      ),
    ];
    const shell = probe.env(GEMINI_BASE_URL_VAR);
    if (shell && trim(shell) !== record.base_url) {
      hints.push(
        `this shell exports ${GEMINI_BASE_URL_VAR}=${shell}, which wins over the env file: unset it where Gemini CLI starts`,
      );
    }
    const home = probe.env("HOME");
    const settings = [
      ...(g.user ? [] : [join(g.base, ".gemini", "settings.json")]),
      ...(home ? [join(home, ".gemini", "settings.json")] : []),
    ].map((file) => ({
      file,
      selectedType: (readSettings(file, probe) as {
        security?: { auth?: { selectedType?: unknown } };
      } | null)?.security?.auth?.selectedType,
    }));
    const auth = geminiAuth(settings, probe.env);
    if (!auth.follows_base_url) {
      hints.push(
        `Gemini CLI signs in with ${auth.type} (${auth.from}): its model calls then go to Google's endpoint for it, not to ${GEMINI_BASE_URL_VAR} — use a Gemini API key (/auth in Gemini CLI)`,
      );
    }
    return hints;
  }
  if (g.host === "host_c") {
    return [
      where,
      "its model is an anthropic/… or openai/… one (other providers' calls do not go through the gateway)",
      ...token,
    ];
  }
  const hints = [
    where,
    g.user
      ? "no project .claude/settings.json or settings.local.json sets env.ANTHROPIC_BASE_URL (they win over the user's)"
      : "no managed settings set env.ANTHROPIC_BASE_URL (they win over the project's)",
    ...token,
  ];
  const shell = probe.env("ANTHROPIC_BASE_URL");
  if (shell && trim(shell) !== record.base_url) {
    hints.push(
      `this shell sets ANTHROPIC_BASE_URL=${shell}: unset it where the host starts`,
    );
  }
  for (const name of ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"]) {
    const v = probe.env(name);
    if (v && v !== "0" && v !== "false") {
      hints.push(
        `this shell sets ${name}: the host then calls that cloud, not ANTHROPIC_BASE_URL`,
      );
    }
  }
  return hints;
}
