/**
 * `install --gateway` and its undoing: the gateway edits of host_a's
 * settings (applied and reverted inside `cmd_install.ts`'s hook install),
 * and host_c's `opencode.json`, whose state and backups are kept in
 * `.opencode/` (or OpenCode's user folder).
 *
 * @module
 */
import { join } from "node:path";
import {
  applyGateway,
  claudeGatewayPlan,
  GatewayConflictError,
  type GatewayEdit,
  type GatewayPlan,
  type GatewayRecord,
  opencodeGatewayPlan,
  opencodeRouting,
  revertGateway,
} from "../installers/gateway_settings.ts";
import type { Settings } from "../installers/hook_settings.ts";
import type { InstallArgs } from "./install_args.ts";
import { type Io, UsageError } from "./io.ts";
import {
  freshBackupPath,
  opencodeConfigFiles,
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
 * @throws {UsageError} For `gateway` with a host other than host_a and host_c.
 */
export function checkGatewayHost(a: InstallArgs): void {
  if (a.gateway && a.host !== "host_a" && a.host !== "host_c") {
    throw new UsageError(
      `--gateway is for claude-code and opencode, not gemini-cli: install gemini-cli without --gateway`,
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
      ...applyGateway(reverted.settings, gatewayPlan(a, reverted.settings)),
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
      `${a.host}: left "${
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
      `${a.host}: ${where} through the harness model gateway at ${r.base_url} (${
        r.capture ? `capture ${r.capture}` : "the active capture"
      }); keep the server running while the host is in use ("ingest.ts serve"), or "ingest.ts uninstall ${a.host}": without the server the host cannot reach its model`,
    );
    if (a.host === "host_c") opencodeRoutingNotes(change.settings, r, io);
    if (a.token) {
      io.out(
        a.host === "host_c"
          ? `host_c: the server takes a token: ${file} sends it from HARNESS_INGEST_TOKEN, so start OpenCode where that is set`
          : `host_a: the server takes a token, which Claude Code's model calls must carry or get 401; install does not write it into settings: add the line "x-harness-token: <token>" to env.ANTHROPIC_CUSTOM_HEADERS in .claude/settings.local.json (git ignores it; copy the x-harness-capture line there too if you pinned one)`,
      );
    }
  } else if (earlier) {
    io.out(
      `${a.host}: took the model gateway out of ${file} (install with --gateway to keep it)`,
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
      `harness: warning: host_c: this project's ${m.key} "${m.model}" is from provider "${m.provider}", which keeps its own base URL${at}: its model calls do not go through the gateway, so the capture gets the plugin's events without the model's requests and answers. To record them, start the server with --upstream-openai ${upstream} (an OpenAI-compatible provider; --upstream-anthropic for an Anthropic one) and set provider.${m.provider}.options.baseURL to ${r.base_url} in opencode.json (uninstall does not undo that edit)`,
    );
  }
  if (!routing.names_model) {
    io.out(
      `host_c: opencode.json names no model: OpenCode's model calls go through the gateway only when that model is an anthropic or openai one`,
    );
  }
  if (routing.others.length > 0) {
    io.out(
      `host_c: not through the gateway (their own base URLs): ${
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
        io.out(`host_c: removed ${file} (the install had created it)`);
      } else if (before !== null) {
        const text = state?.original != null && sameJson(state.original, next)
          ? state.original
          : JSON.stringify(next, null, 2) + "\n";
        if (text !== before) {
          Deno.writeTextFileSync(file, text);
          io.out(
            `host_c: took the model gateway out of ${file}${
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
        io.out(`host_c: backed up ${file} to ${backup}`);
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
