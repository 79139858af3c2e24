/**
 * `install --gateway` and its undoing: the gateway edits of host_a's
 * settings (applied and reverted inside `cmd_install.ts`'s hook install),
 * and host_c's `opencode.json`, whose state and backups are kept in
 * `.opencode/` (or OpenCode's user folder).
 *
 * @module
 */
import { hostLabel } from "../trace/hosts.ts";
import { dirname, join } from "node:path";
import {
  applyGateway,
  claudeGatewayPlan,
  GatewayConflictError,
  type GatewayEdit,
  type GatewayPlan,
  type GatewayRecord,
  opencodeGatewayPlan,
  opencodeRouting,
  PROVIDER_BASE_URLS,
  revertGateway,
} from "../installers/gateway_settings.ts";
import {
  GEMINI_BASE_URL_VAR,
  GEMINI_HEADERS_VAR,
  type GeminiAuth,
  geminiAuth,
  type GeminiEnvEdit,
  geminiEnvTarget,
  parseEnvFile,
  pointEnvText,
  unpointEnvText,
} from "../installers/gemini_env.ts";
import type { Settings } from "../installers/hook_settings.ts";
import type { InstallArgs } from "./install_args.ts";
import { exists, type Io, UsageError } from "./io.ts";
import { UPSTREAMS } from "../model_gateway/wires/registry.ts";

/** The providers' own base URLs: the registry's upstreams' and other spellings of them. */
const PROVIDERS: readonly string[] = [
  ...UPSTREAMS.map((u) => u.default),
  ...PROVIDER_BASE_URLS,
];
import {
  baseDir,
  freshBackupPath,
  opencodeConfigFiles,
  parseJsonc,
  readSettings,
  readText,
  sameJson,
} from "./_install_files.ts";

/** What `install host_c --gateway` records beside OpenCode's config. */
interface OpencodeState {
  /** The install created `opencode.json`. */
  created_file: boolean;
  /** Its text before the first gateway install (null: there was none). */
  original: string | null;
  /** The backups install wrote. */
  backups: string[];
  /** What `--gateway` changed. */
  gateway: GatewayRecord;
}

/**
 * Refuse `--gateway` for a host whose model base URL install cannot set.
 *
 * @param a Arguments.
 * @throws {UsageError} For `gateway` with a host other than host_a, host_b and host_c.
 */
export function checkGatewayHost(a: InstallArgs): void {
  if (a.gateway && !["host_a", "host_b", "host_c"].includes(a.host)) {
    throw new UsageError(
      `--gateway is for claude-code, gemini-cli and opencode, not ${a.host}`,
    );
  }
}

/** A gateway edit of one settings file: the settings after it, and what it recorded. */
export interface GatewayChange {
  /** The settings with the earlier gateway edits taken out, and the new ones in. */
  settings: Settings;
  /** What the new edits changed (none without `--gateway`). */
  record?: GatewayRecord;
  /** Earlier edits left in place because the value was changed since. */
  kept: GatewayEdit[];
}

/**
 * Take an earlier gateway install out of the settings and, when `apply`,
 * put the one these arguments ask for in (so installing twice changes
 * nothing, and a new `--capture` or `--url` replaces the old).
 *
 * @param a Arguments (host, url, capture).
 * @param change The settings file, its settings, the earlier record, and whether to apply.
 * @returns The change.
 * @throws {Error} When the settings already send model calls to another base URL (the message says what to do).
 */
export function gatewayEdit(
  a: InstallArgs,
  change: {
    file: string;
    settings: Settings;
    record: GatewayRecord | undefined;
    apply: boolean;
  },
): GatewayChange {
  const { file, settings, record, apply } = change;
  const reverted = record
    ? revertGateway(settings, record)
    : { settings, kept: [] };
  if (!apply) return reverted;
  try {
    return {
      ...applyGateway(
        reverted.settings,
        gatewayPlan(a, reverted.settings),
        PROVIDERS,
      ),
      kept: reverted.kept,
    };
  } catch (err) {
    if (!(err instanceof GatewayConflictError)) throw err;
    throw new Error(
      `${file}: ${err.message}; nothing was changed. To record the model calls, remove "${
        err.path.join(".")
      }" from ${file} if the host may reach the provider directly, then install again; to record with hooks only, install without --gateway`,
      { cause: err },
    );
  }
}

/**
 * The gateway values of a host.
 *
 * @param a Arguments (host, url, capture).
 * @param settings The settings without gateway edits.
 * @returns The plan.
 */
export function gatewayPlan(a: InstallArgs, settings: Settings): GatewayPlan {
  const o = { url: a.url, capture: a.capture };
  return a.host === "host_c"
    ? opencodeGatewayPlan({ ...o, token: a.token })
    : claudeGatewayPlan(settings, o);
}

/**
 * A record for settings whose install state is lost: our values, nothing
 * before them (uninstall then takes out the values that are still ours).
 *
 * @param plan The plan the arguments give.
 * @returns The record.
 */
export function recordOf(plan: GatewayPlan): GatewayRecord {
  return {
    base_url: plan.base_url,
    edits: plan.values.map(({ path, value }) => ({ path, value })),
    created: [],
  };
}

/**
 * Say what a gateway change did.
 *
 * @param done The install's arguments, the settings file, the change, and
 * the record it replaced.
 * @param io Output.
 */
export function gatewayNotes(
  done: {
    args: InstallArgs;
    file: string;
    change: GatewayChange;
    earlier?: GatewayRecord;
  },
  io: Io,
): void {
  const { args: a, file, change, earlier } = done;
  for (const e of change.kept) {
    io.out(
      `${hostLabel(a.host)}: left "${
        e.path.join(".")
      }" in ${file} as it is: it was changed after the gateway install`,
    );
  }
  const r = change.record;
  if (r) {
    const where = a.host === "host_c"
      ? "the anthropic and openai providers' model calls go"
      : "model calls go";
    io.out(
      `${
        hostLabel(a.host)
      }: ${where} through the harness model gateway at ${r.base_url} (${
        r.capture ? `capture ${r.capture}` : "the active capture"
      }); keep the server running while the host is in use ("ingest.ts serve"), or "ingest.ts uninstall ${
        hostLabel(a.host)
      }": without the server the host cannot reach its model`,
    );
    if (a.host === "host_c") opencodeRoutingNotes(change.settings, r, io);
    if (a.token) {
      io.out(
        a.host === "host_c"
          ? `opencode: the server takes a token: ${file} sends it from HARNESS_INGEST_TOKEN, so start OpenCode where that is set`
          : `claude-code: the server takes a token, which Claude Code's model calls must carry or get 401; install does not write it into settings: add the line "x-harness-token: <token>" to env.ANTHROPIC_CUSTOM_HEADERS in .claude/settings.local.json (git ignores it; copy the x-harness-capture line there too if you pinned one)`,
      );
    }
  } else if (earlier) {
    io.out(
      `${
        hostLabel(a.host)
      }: took the model gateway out of ${file} (install with --gateway to keep it)`,
    );
  }
}

/**
 * Say which of the project's models go through the gateway and which do
 * not (a custom provider keeps its own base URL), and how to route one.
 *
 * @param settings `opencode.json` after the install.
 * @param r The gateway record.
 * @param io Output (warnings to stderr).
 */
function opencodeRoutingNotes(
  settings: Settings,
  r: GatewayRecord,
  io: Io,
): void {
  const routing = opencodeRouting(settings);
  for (const m of routing.past) {
    const at = m.base_url ? ` (${m.base_url})` : "";
    const upstream = m.base_url ?? "<its base URL>";
    io.err(
      `harness: warning: opencode: this project's ${m.key} "${m.model}" is from provider "${m.provider}", which keeps its own base URL${at}: its model calls do not go through the gateway, so the capture gets the plugin's events without the model's requests and answers. To record them, start the server with --upstream-openai ${upstream} (an OpenAI-compatible provider; --upstream-anthropic for an Anthropic one) and set provider.${m.provider}.options.baseURL to ${r.base_url} in opencode.json (uninstall does not undo that edit)`,
    );
  }
  if (!routing.names_model) {
    io.out(
      `opencode: opencode.json names no model: OpenCode's model calls go through the gateway only when that model is an anthropic or openai one`,
    );
  }
  if (routing.others.length > 0) {
    io.out(
      `opencode: not through the gateway (their own base URLs): ${
        routing.others.map((o) =>
          `provider "${o.provider}"${o.base_url ? ` (${o.base_url})` : ""}`
        ).join(", ")
      }`,
    );
  }
}

/**
 * host_c's gateway: read `opencode.json` and the install's record of it,
 * and work out the change (refusing before anything is written); the
 * returned function writes it.
 *
 * @param a Arguments.
 * @param how `remove`: take it out (uninstall); `io`: output.
 * @returns What writes the change, or null when there is nothing to do.
 * @throws {Error} When `opencode.json` is not JSON or already sends a provider's calls elsewhere.
 */
export function opencodeGateway(
  a: InstallArgs,
  { remove, io }: { remove: boolean; io: Io },
): (() => void) | null {
  const { file, state: statePath, keep } = opencodeConfigFiles(a);
  const stateText = readText(statePath);
  const state = stateText ? JSON.parse(stateText) as OpencodeState : null;
  if (state === null && !a.gateway) return null;
  const before = readText(file);
  const settings = readSettings({ host: a.host, file, before }, io);
  const record = state?.gateway ??
    (remove && before !== null
      ? recordOf(gatewayPlan(a, settings))
      : undefined);
  const change = gatewayEdit(a, {
    file,
    settings,
    record,
    apply: !!a.gateway && !remove,
  });
  if (!change.record) {
    const next = change.settings;
    return () => {
      if (
        before !== null && state?.created_file && Object.keys(next).length === 0
      ) {
        Deno.removeSync(file);
        io.out(`opencode: removed ${file} (the install had created it)`);
      } else if (before !== null) {
        const text = state?.original != null && sameJson(state.original, next)
          ? state.original
          : JSON.stringify(next, null, 2) + "\n";
        if (text !== before) {
          Deno.writeTextFileSync(file, text);
          io.out(
            `opencode: took the model gateway out of ${file}${
              remove ? "" : " (install with --gateway to keep it)"
            }`,
          );
        }
      }
      gatewayNotes(
        { args: a, file, change: { ...change, record: undefined } },
        io,
      );
      for (const b of state?.backups ?? []) removeIfThere(b);
      if (stateText !== null) Deno.removeSync(statePath);
    };
  }
  const text = JSON.stringify(change.settings, null, 2) + "\n";
  const next: OpencodeState = {
    created_file: state?.created_file ?? before === null,
    original: state ? state.original : before,
    backups: state?.backups ?? [],
    gateway: change.record,
  };
  return () => {
    Deno.mkdirSync(keep, { recursive: true });
    if (text !== before) {
      if (before !== null) {
        const backup = freshBackupPath(
          join(keep, "opencode.json.harness-backup-"),
        );
        Deno.writeTextFileSync(backup, before);
        if (!next.backups.includes(backup)) next.backups.push(backup);
        io.out(`opencode: backed up ${file} to ${backup}`);
      }
      Deno.writeTextFileSync(file, text);
    }
    Deno.writeTextFileSync(statePath, JSON.stringify(next, null, 2) + "\n");
    gatewayNotes({ args: a, file, change, earlier: state?.gateway }, io);
  };
}

/** Remove a file install wrote, unless it is gone already. */
function removeIfThere(path: string): void {
  try {
    Deno.removeSync(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/** Where and what a Gemini CLI gateway install wrote (kept in the install's state file). */
export interface GeminiEnvState extends GeminiEnvEdit {
  /** The env file edited. */
  file: string;
  /** The install created it. */
  created_file: boolean;
  /** The install created its folder (`.gemini/`). */
  created_dir: boolean;
}

/** A Gemini CLI gateway change, worked out before anything is written. */
export interface GeminiGatewayChange {
  /** What the install set, as `doctor` reads it (undefined: the gateway is out). */
  record?: GatewayRecord;
  /** Where and what (undefined when nothing of the gateway is left). */
  where?: GeminiEnvState;
  /** Write it. */
  write(): void;
}

/** An environment variable, or undefined when it is not set or not granted. */
function envOf(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The auth type of the Gemini CLI settings a project's sessions read. */
function geminiAuthOf(a: InstallArgs, base: string): GeminiAuth {
  const files = [
    ...(a.user ? [] : [join(base, ".gemini", "settings.json")]),
    ...(a.home ? [join(a.home, ".gemini", "settings.json")] : []),
  ];
  return geminiAuth(
    files.map((file) => {
      let selectedType: unknown = undefined;
      try {
        const s = parseJsonc(readText(file) ?? "{}") as {
          security?: { auth?: { selectedType?: unknown } };
        };
        selectedType = s.security?.auth?.selectedType;
      } catch { /* unreadable settings: Gemini CLI says so itself */ }
      return { file, selectedType };
    }),
    envOf,
  );
}

const trimUrl = (u: string) => u.replace(/\/+$/, "");

/**
 * host_b's gateway (Gemini CLI): `GOOGLE_GEMINI_BASE_URL` (and with
 * `--capture`, an `x-harness-capture` entry in `GEMINI_CLI_CUSTOM_HEADERS`)
 * in the env file Gemini CLI reads for the project
 * (`lib/installers/gemini_env.ts` says which, and why a new project file
 * is not made when another would be hidden). The earlier install's lines
 * are taken out first; worked out before anything is written (refusing
 * then); the returned change writes it.
 *
 * @param a Arguments.
 * @param how Where the earlier install wrote, whether to take it out
 *   (`remove`), output.
 * @returns The change.
 * @throws {Error} When the file Gemini CLI reads is not the project's own,
 *   or a different base URL is set there or exported.
 */
export function geminiGateway(
  a: InstallArgs,
  how: { where?: GeminiEnvState; remove: boolean; io: Io },
): GeminiGatewayChange {
  const { where, io } = how;
  const apply = !!a.gateway && !how.remove;
  const base = baseDir(a);
  const home = a.home ?? envOf("HOME") ?? base;
  const target = apply
    ? geminiEnvTarget({ dir: base, home, exists }, a.user)
    : null;
  const url = trimUrl(a.url);
  if (target && "refused" in target) {
    throw new Error(
      `${target.refused}; nothing was changed. Add ${GEMINI_BASE_URL_VAR}=${url} to ${target.reads} yourself, or export it where Gemini CLI starts${
        a.user ? "" : ", or install with --user (the user's env file)"
      }; to record with hooks only, install without --gateway`,
    );
  }
  // The earlier install's lines go first (its file may not be the one
  // wanted now).
  const old = where ? readText(where.file) : null;
  const undone = where && old !== null
    ? unpointEnvText(old, where)
    : { text: old, kept: [] as string[] };
  for (const k of undone.kept) {
    io.out(
      `gemini-cli: left ${k} in ${where?.file} as it is: it was changed after the gateway install`,
    );
  }
  const takeOut = () => {
    if (!where || old === null || undone.text === old) return;
    if (where.created_file && undone.text === "") {
      Deno.removeSync(where.file);
      io.out(`gemini-cli: removed ${where.file} (the install had created it)`);
      if (where.created_dir) {
        try {
          Deno.removeSync(dirname(where.file)); // only when empty
        } catch { /* other files there: kept */ }
      }
    } else {
      Deno.writeTextFileSync(where.file, undone.text!);
      io.out(`gemini-cli: took the model gateway out of ${where.file}`);
    }
  };
  if (!target) return { write: takeOut };
  const file = target.file;
  const sameFile = where?.file === file;
  const before = sameFile ? undone.text : readText(file);
  const current = parseEnvFile(before ?? "")[GEMINI_BASE_URL_VAR];
  for (
    const [value, place] of [
      [current, file],
      [envOf(GEMINI_BASE_URL_VAR), "this shell (exported)"],
    ] as const
  ) {
    if (
      value === undefined || trimUrl(value) === url ||
      PROVIDERS.includes(trimUrl(value))
    ) continue;
    throw new Error(
      place === file
        ? `${file}: ${GEMINI_BASE_URL_VAR} is already ${
          JSON.stringify(value)
        } (another gateway or proxy, which the model gateway cannot forward to yet); nothing was changed. To record the model calls, remove it from ${file} if Gemini CLI may reach the Gemini API directly, then install again; to record with hooks only, install without --gateway`
        : `${GEMINI_BASE_URL_VAR} is exported as ${
          JSON.stringify(value)
        } in this shell, and an exported variable wins over Gemini CLI's env file: its model calls would keep going there; nothing was changed. Unset it (or point it at ${url}) where Gemini CLI starts, then install again`,
    );
  }
  const { text, edit } = pointEnvText(before, {
    base_url: url,
    capture: a.capture,
  });
  const next: GeminiEnvState = {
    file,
    created_file: sameFile ? where!.created_file : before === null,
    created_dir: sameFile ? where!.created_dir : !exists(dirname(file)),
    ...edit,
  };
  const auth = geminiAuthOf(a, base);
  return {
    record: {
      base_url: url,
      ...(a.capture !== undefined ? { capture: a.capture } : {}),
      edits: [{ path: [GEMINI_BASE_URL_VAR], value: url }],
      created: [],
    },
    where: next,
    write() {
      if (!sameFile) takeOut();
      if (text !== before) {
        Deno.mkdirSync(dirname(file), { recursive: true });
        Deno.writeTextFileSync(file, text);
      }
      io.out(
        `gemini-cli: set ${GEMINI_BASE_URL_VAR}=${url} in ${file}${
          next.created_file ? " (created)" : ""
        }: Gemini CLI started in ${base} sends its model calls through the harness model gateway (${
          a.capture ? `capture ${a.capture}` : "the active capture"
        }); keep the server running while it is in use ("ingest.ts serve"), or "ingest.ts uninstall gemini-cli": without the server Gemini CLI cannot reach its model`,
      );
      io.out(
        "gemini-cli: the model's side is the gateway's (the hooks leave out BeforeToolSelection and AfterModel): one model.requested/model.responded per model call, the router's classifier call included",
      );
      if (!auth.follows_base_url) {
        io.err(
          `harness: warning: gemini-cli: Gemini CLI signs in with ${auth.type} (${auth.from}): its model calls then go to ${
            auth.type === "vertex-ai"
              ? "Vertex AI (GOOGLE_VERTEX_BASE_URL)"
              : "Google's Code Assist endpoint"
          }, not to ${GEMINI_BASE_URL_VAR}, so the gateway records none of them. To record them, use a Gemini API key (in Gemini CLI: /auth, "Use Gemini API Key")`,
        );
      }
      if (a.token) {
        io.out(
          `gemini-cli: the server takes a token, which Gemini CLI's model calls must carry or get 401; install writes no token into ${file} (files in .gemini/ are listed to the model): export ${GEMINI_HEADERS_VAR}="x-harness-token: <token>${
            a.capture ? `, x-harness-capture: ${a.capture}` : ""
          }" where Gemini CLI starts (an exported value wins over the file's)`,
        );
      }
    },
  };
}
