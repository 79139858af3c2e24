/**
 * Pure edits that point a host's model base URL at the harness model
 * gateway (the ingest server's `/v1/…` routes), and take exactly them out.
 *
 * - host_a (Claude Code), `.claude/settings.json`: `env.ANTHROPIC_BASE_URL`
 *   is the server's URL (Claude Code appends `/v1/messages`); a pinned
 *   capture goes in `env.ANTHROPIC_CUSTOM_HEADERS` (`Name: value` lines,
 *   sent with every model request), beside any lines already there.
 * - host_c (OpenCode), `opencode.json`: `provider.<id>.options.baseURL` of
 *   the `anthropic` and `openai` providers is `<url>/v1` (the AI SDK's base
 *   URLs include `/v1`); a pinned capture is `options.headers`, and so is
 *   the server's token when it takes one (as `{env:HARNESS_INGEST_TOKEN}`:
 *   the token is not written). Other options of those providers are kept;
 *   other providers are not touched.
 *
 * Every value set is recorded with what was there before
 * ({@linkcode GatewayRecord}), so {@linkcode revertGateway} gives back the
 * settings as they were. A base URL already pointing elsewhere (a
 * corporate proxy, another gateway) is refused: the model gateway forwards
 * to the provider itself and cannot chain to it.
 *
 * @module
 */
import type { Settings } from "./hook_settings.ts";

/** The request header that pins a capture at the model gateway. */
export const CAPTURE_HEADER = "x-harness-capture";

/** The request header that carries the server's token on the model routes (beside the client's own key). */
export const TOKEN_HEADER = "x-harness-token";

/**
 * What OpenCode's `options.headers` sends as {@linkcode TOKEN_HEADER}: the
 * token from the environment OpenCode starts in (OpenCode substitutes
 * `{env:…}` in its config), never the token itself.
 */
export const OPENCODE_TOKEN_VALUE = "{env:HARNESS_INGEST_TOKEN}";

/** OpenCode providers whose base URL `--gateway` points at the server. */
export const OPENCODE_GATEWAY_PROVIDERS: readonly string[] = [
  "anthropic",
  "openai",
];

/**
 * Spellings of the providers' own base URLs beside the ones the model
 * gateway's registry names (`cli/_install_gateway.ts` adds those): a
 * setting that names one is not another gateway (the model gateway forwards
 * there itself), so it does not stand in the way.
 */
export const PROVIDER_BASE_URLS: readonly string[] = [
  "https://api.anthropic.com/v1",
];

/** One value a gateway install wants in the settings. */
export interface GatewayValue {
  /** Key path from the top of the settings (`["env", "ANTHROPIC_BASE_URL"]`). */
  path: string[];
  /** The value to set. */
  value: string;
  /**
   * A different value already there is refused rather than replaced (a
   * base URL: the host's model calls go somewhere the gateway cannot
   * forward to).
   *
   * @default {false}
   */
  exclusive?: boolean;
}

/** What a gateway install wants: the URL the host's model calls go to and the values that say so. */
export interface GatewayPlan {
  /** The base URL the host's model calls go to. */
  base_url: string;
  /** The capture pinned by header, if any. */
  capture?: string;
  /** The values to set, in order. */
  values: GatewayValue[];
}

/** One value a gateway install set (kept in the install's state file). */
export interface GatewayEdit {
  /** Key path from the top of the settings. */
  path: string[];
  /** The value written. */
  value: string;
  /** The value that was there before; absent when there was none. */
  before?: unknown;
}

/** What a gateway install changed in one settings file (kept in the install's state file). */
export interface GatewayRecord {
  /** The base URL the host's model calls go to. */
  base_url: string;
  /** The capture pinned by header, if any. */
  capture?: string;
  /** The values set, in order. */
  edits: GatewayEdit[];
  /** Objects the install created, outermost first (removed again when left empty). */
  created: string[][];
}

/** The settings already send the host's model calls to another base URL. */
export class GatewayConflictError extends Error {
  /** Key path of the value in the way. */
  readonly path: string[];
  /** The value there. */
  readonly current: unknown;

  /**
   * Create a `GatewayConflictError`.
   *
   * @param path Key path of the value in the way.
   * @param current The value there.
   * @param wanted The base URL the gateway install wanted.
   */
  constructor(path: string[], current: unknown, wanted: string) {
    super(
      `Cannot point "${path.join(".")}" at the harness model gateway ${
        JSON.stringify(wanted)
      }: it is already ${
        JSON.stringify(current)
      } (another gateway or proxy, which the model gateway cannot forward to yet)`,
    );
    this.name = "GatewayConflictError";
    this.path = path;
    this.current = current;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A URL without trailing slashes. */
function trimUrl(url: string): string {
  return url.replace(/\/+$/, "");
}

/**
 * The base URL a host's model client is given: the server's URL for
 * Claude Code (it appends `/v1/messages`), `<url>/v1` for OpenCode's AI SDK
 * providers.
 *
 * @param url The ingest server's URL.
 * @param host `host_a` or `host_c`.
 * @returns The base URL.
 */
export function gatewayBaseUrl(url: string, host: string): string {
  const base = trimUrl(url);
  return host === "host_c" ? `${base}/v1` : base;
}

/**
 * The values that point Claude Code at the gateway: `env.ANTHROPIC_BASE_URL`,
 * and with a capture `env.ANTHROPIC_CUSTOM_HEADERS` (the lines already
 * there kept, an earlier `x-harness-capture` line replaced).
 *
 * @param settings The settings as they are without any gateway edits.
 * @param options The server's URL and the capture to pin.
 * @returns The plan.
 * @throws {TypeError} When `env.ANTHROPIC_CUSTOM_HEADERS` is there but is not a string.
 */
export function claudeGatewayPlan(
  settings: Settings,
  options: { url: string; capture?: string },
): GatewayPlan {
  const base_url = gatewayBaseUrl(options.url, "host_a");
  const values: GatewayValue[] = [
    { path: ["env", "ANTHROPIC_BASE_URL"], value: base_url, exclusive: true },
  ];
  if (options.capture !== undefined) {
    const env = isObject(settings.env) ? settings.env : {};
    const current = env.ANTHROPIC_CUSTOM_HEADERS;
    if (current !== undefined && typeof current !== "string") {
      throw new TypeError(
        `The settings' "env.ANTHROPIC_CUSTOM_HEADERS" is not a string; fix it by hand before installing`,
      );
    }
    const header = new RegExp(`^\\s*${CAPTURE_HEADER}\\s*:`, "i");
    const lines = (current ?? "").split("\n")
      .filter((l) => l.trim() !== "" && !header.test(l));
    values.push({
      path: ["env", "ANTHROPIC_CUSTOM_HEADERS"],
      value: [...lines, `${CAPTURE_HEADER}: ${options.capture}`].join("\n"),
    });
  }
  return { base_url, capture: options.capture, values };
}

/**
 * The values that point OpenCode's `anthropic` and `openai` providers at
 * the gateway: `provider.<id>.options.baseURL`, with a capture
 * `provider.<id>.options.headers["x-harness-capture"]`, and when the server
 * takes a token `headers["x-harness-token"]` read from the environment.
 *
 * @param options The server's URL, the capture to pin, and whether the
 *   server takes a token (`token`, default false).
 * @returns The plan.
 */
export function opencodeGatewayPlan(
  options: { url: string; capture?: string; token?: boolean },
): GatewayPlan {
  const base_url = gatewayBaseUrl(options.url, "host_c");
  const values: GatewayValue[] = [];
  for (const id of OPENCODE_GATEWAY_PROVIDERS) {
    const at = ["provider", id, "options"];
    values.push({ path: [...at, "baseURL"], value: base_url, exclusive: true });
    if (options.capture !== undefined) {
      values.push({
        path: [...at, "headers", CAPTURE_HEADER],
        value: options.capture,
      });
    }
    if (options.token) {
      values.push({
        path: [...at, "headers", TOKEN_HEADER],
        value: OPENCODE_TOKEN_VALUE,
      });
    }
  }
  return { base_url, capture: options.capture, values };
}

/** Which of an OpenCode project's model calls `--gateway` routes through the gateway. */
export interface OpencodeRouting {
  /** The providers whose base URL the install sets (anthropic, openai). */
  through: readonly string[];
  /**
   * The models `opencode.json` names (`model`, `small_model`) whose
   * provider is not one of `through`: their calls go straight to that
   * provider's base URL, past the gateway.
   */
  past: {
    key: string;
    model: string;
    provider: string;
    base_url: string | null;
  }[];
  /** Other providers the file configures (not named by a model), and their base URLs. */
  others: { provider: string; base_url: string | null }[];
  /** Whether the file names a model at all (else OpenCode picks one: its user config, or its default). */
  names_model: boolean;
}

/**
 * Read which model calls of an OpenCode project `--gateway` routes (pure):
 * only the `anthropic` and `openai` providers' base URLs are set, so a
 * model of a custom provider (`provider.<id>` with its own `baseURL`) is
 * not recorded by the gateway.
 *
 * @param settings `opencode.json` as it is.
 * @returns What goes through and what does not.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * const r = opencodeRouting({
 *   model: "fake/fake-model",
 *   provider: { fake: { options: { baseURL: "http://127.0.0.1:42061/v1" } } },
 * });
 * equal(r.past[0].provider, "fake");
 * equal(r.past[0].base_url, "http://127.0.0.1:42061/v1");
 * ```
 */
export function opencodeRouting(settings: Settings): OpencodeRouting {
  const providers = isObject(settings.provider) ? settings.provider : {};
  const baseOf = (id: string): string | null => {
    const p = providers[id];
    const o = isObject(p) && isObject(p.options) ? p.options : {};
    return typeof o.baseURL === "string" ? o.baseURL : null;
  };
  const past: OpencodeRouting["past"] = [];
  const named = new Set<string>();
  let names_model = false;
  for (const key of ["model", "small_model"]) {
    const model = settings[key];
    if (typeof model !== "string" || !model.includes("/")) continue;
    if (key === "model") names_model = true;
    const provider = model.slice(0, model.indexOf("/"));
    named.add(provider);
    if (OPENCODE_GATEWAY_PROVIDERS.includes(provider)) continue;
    past.push({ key, model, provider, base_url: baseOf(provider) });
  }
  const others = Object.keys(providers)
    .filter((id) => !OPENCODE_GATEWAY_PROVIDERS.includes(id) && !named.has(id))
    .map((provider) => ({ provider, base_url: baseOf(provider) }));
  return { through: OPENCODE_GATEWAY_PROVIDERS, past, others, names_model };
}

/** The value at a key path, or undefined. */
function valueAt(settings: Settings, path: string[]): unknown {
  let v: unknown = settings;
  for (const key of path) {
    if (!isObject(v)) return undefined;
    v = v[key];
  }
  return v;
}

/**
 * Set a plan's values (refusing a different base URL already there) and
 * record what was there before.
 *
 * @param settings The settings, without earlier gateway edits (revert them first).
 * @param plan What to set.
 * @param providers The providers' own base URLs (not in the way).
 * @returns New settings (the input is not changed) and the record that undoes them.
 * @throws {GatewayConflictError} When an exclusive value (a base URL) is already set to something else.
 * @throws {TypeError} When a key on the way is there but is not an object.
 */
export function applyGateway(
  settings: Settings,
  plan: GatewayPlan,
  providers: readonly string[] = PROVIDER_BASE_URLS,
): { settings: Settings; record: GatewayRecord } {
  for (const v of plan.values) {
    const current = valueAt(settings, v.path);
    if (
      v.exclusive && current !== undefined &&
      !(typeof current === "string" &&
        [v.value, ...providers].includes(trimUrl(current)))
    ) {
      throw new GatewayConflictError(v.path, current, v.value);
    }
  }
  const out = structuredClone(settings);
  const record: GatewayRecord = {
    base_url: plan.base_url,
    ...(plan.capture !== undefined ? { capture: plan.capture } : {}),
    edits: [],
    created: [],
  };
  for (const v of plan.values) {
    let parent: Record<string, unknown> = out;
    for (let i = 0; i < v.path.length - 1; i++) {
      const key = v.path[i];
      if (parent[key] === undefined) {
        parent[key] = {};
        record.created.push(v.path.slice(0, i + 1));
      } else if (!isObject(parent[key])) {
        throw new TypeError(
          `The settings' "${
            v.path.slice(0, i + 1).join(".")
          }" is not an object; fix it by hand before installing`,
        );
      }
      parent = parent[key] as Record<string, unknown>;
    }
    const key = v.path[v.path.length - 1];
    record.edits.push(
      key in parent
        ? { path: v.path, value: v.value, before: parent[key] }
        : { path: v.path, value: v.value },
    );
    parent[key] = v.value;
  }
  return { settings: out, record };
}

/**
 * Take a gateway install's edits out: each value it set goes back to what
 * was there before (or goes, when nothing was), and objects it created go
 * when left empty. A value changed since the install is left as it is.
 *
 * @param settings The settings as they are now.
 * @param record What the install changed.
 * @returns New settings (the input is not changed), and the edits left in place because the value was changed since.
 */
export function revertGateway(
  settings: Settings,
  record: GatewayRecord,
): { settings: Settings; kept: GatewayEdit[] } {
  const out = structuredClone(settings);
  const kept: GatewayEdit[] = [];
  for (const e of [...record.edits].reverse()) {
    const parent = valueAt(out, e.path.slice(0, -1));
    const key = e.path[e.path.length - 1];
    if (!isObject(parent) || !(key in parent)) continue;
    if (parent[key] !== e.value) {
      kept.push(e);
      continue;
    }
    if ("before" in e) parent[key] = e.before;
    else delete parent[key];
  }
  for (const p of [...record.created].reverse()) {
    const parent = valueAt(out, p.slice(0, -1));
    const key = p[p.length - 1];
    if (!isObject(parent)) continue;
    const v = parent[key];
    if (isObject(v) && Object.keys(v).length === 0) delete parent[key];
  }
  return { settings: out, kept: kept.reverse() };
}

/**
 * Whether the settings still send the host's model calls to the gateway
 * the record names (every base URL it set is still there).
 *
 * @param settings The settings as they are now.
 * @param record What the install changed.
 * @returns True when the host's model calls go to `record.base_url`.
 */
export function gatewayInPlace(
  settings: Settings,
  record: GatewayRecord,
): boolean {
  const urls = record.edits.filter((e) => e.value === record.base_url);
  return urls.length > 0 &&
    urls.every((e) => valueAt(settings, e.path) === e.value);
}
