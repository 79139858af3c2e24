/**
 * Pure edits of host_a (`.claude/settings.json`) and host_b
 * (`.gemini/settings.json`) hook configuration: add the harness hooks,
 * merging with what is there, idempotently, and remove exactly them.
 *
 * Both hosts read `"hooks": {"<Event>": [{"matcher"?, "hooks": [entry…]}]}`.
 * A harness entry is recognised by what it points at: an `http` entry whose
 * URL contains `/hook/<host>`, or a `command` entry whose command ends in
 * `hook <host>` (optionally followed by `--url …`). No marker field is added,
 * since hosts may validate their settings strictly.
 *
 * @module
 */

/** A settings object (parsed JSON). */
export type Settings = Record<string, unknown>;

/** One hook entry. */
export interface HookEntry {
  /** `http` or `command`. */
  type: string;
  /** For http entries. */
  url?: string;
  /** For command entries. */
  command?: string;
  /** Time-out (seconds for host_a, milliseconds for host_b). */
  timeout?: number;
  /** host_b: display name. */
  name?: string;
}

/** What to install for one host. */
export interface HookPlan {
  /** Host name. */
  host: "host_a" | "host_b";
  /** Event → entry to add (and whether the group gets `matcher: "*"`). */
  events: { event: string; entry: HookEntry; matcher?: string }[];
}

/**
 * Time-outs the hosts apply to our hooks, set by one rule: **no installed
 * time-out at or below 5× our own p99** for the slowest path that entry may
 * take, measured under load (`deno task bench hooks`). A time-out only
 * bounds a hook that hangs: each of our paths gives up by itself (curl's
 * and the forwarder's `HARNESS_HOOK_TIMEOUT`, 300 ms by default) and exits
 * 0, so a generous host time-out costs nothing while the server answers,
 * and a tight one kills a hook that was about to finish (host_b's old
 * 1,000 ms, at or below one forwarder call on a loaded machine, broke
 * Gemini CLI's interactive session).
 *
 * - Command hooks may run the Deno forwarder (host_a's transcript events;
 *   the client's fallback without curl): its p99 was 264 ms at load
 *   average 10 on 2 cores and 806 ms at 12 (`bench hooks`; the issue saw
 *   73–278 ms), so 5× is up to ~4 s. The hook client's p99 there was
 *   72–371 ms (5×: ≤ 1.9 s). We install 10 s (host_a: 10 s, host_b:
 *   10,000 ms): above 5× the worst p99 measured, with room for a machine
 *   busier still.
 * - host_a's http hooks are the server's own answer (p99 10–29 ms there):
 *   1 s, the least the host takes, is above 5×.
 */
export const HOST_A_HTTP_TIMEOUT_S = 1;
/** host_a command hook time-out (seconds); see {@linkcode HOST_A_HTTP_TIMEOUT_S} for the rule. */
export const HOST_A_COMMAND_TIMEOUT_S = 10;
/** host_b command hook time-out (milliseconds); see {@linkcode HOST_A_HTTP_TIMEOUT_S} for the rule. */
export const HOST_B_TIMEOUT_MS = 10_000;

/** host_a events that carry tool names (their groups get `matcher: "*"`). */
const HOST_A_TOOL_EVENTS = new Set([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
]);

/** host_a events forwarded. */
export const HOST_A_EVENTS: readonly string[] = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "PermissionRequest",
  "SubagentStart",
  "SubagentStop",
  "Stop",
  "StopFailure",
  "PreCompact",
  "PostCompact",
  "SessionEnd",
];

/**
 * host_a events at which the forwarder reads the session transcript
 * (tokens and the assistant's text, `lib/forwarder/transcript.ts`): they
 * run the forwarder even in `http` mode, since an http hook posts the
 * payload straight to the server, which never opens a transcript path.
 * SubagentStart is one (the main agent's text before the Agent call is
 * recorded before the subagent's). SessionEnd is one (the turns after the
 * last Stop): the host gives it
 * 1.5 s unless the hook sets a time-out, and ours is 10 s; it never waits
 * for a record, so it costs one forwarder call.
 */
export const HOST_A_TRANSCRIPT_EVENTS: ReadonlySet<string> = new Set([
  "SubagentStart",
  "Stop",
  "StopFailure",
  "SubagentStop",
  "PreCompact",
  "SessionEnd",
]);

/** host_b events forwarded. */
export const HOST_B_EVENTS: readonly string[] = [
  "SessionStart",
  "BeforeAgent",
  "BeforeToolSelection",
  "BeforeTool",
  "AfterTool",
  "AfterModel",
  "AfterAgent",
  "PreCompress",
  "Notification",
  "SessionEnd",
];

/** What the host_a plan is made of. */
export interface HostAPlanOptions {
  /** Ingest URL of the http hooks (with `?cap=` when pinned). */
  hookUrl: string;
  /** The command hook for events that need no transcript (the hook client, or the forwarder). */
  command: string;
  /**
   * The command hook for the transcript events (the Deno forwarder, which
   * reads the transcript).
   * @default the `command`
   */
  transcriptCommand?: string;
  /** `http` hooks where the host has them, or `command` hooks everywhere. */
  mode: "http" | "command";
  /**
   * Whether the transcript events read the transcript (run the forwarder).
   * False with the model gateway (`install --gateway`): the gateway records
   * every model call's tokens and the turns' texts, so a turn end is an
   * http hook like the others (~1 ms instead of a Deno start and up to
   * 250 ms of waiting for the transcript).
   * @default true
   */
  transcript?: boolean;
}

/**
 * The host_a plan: native `http` hooks (no process per hook) with a 1 s
 * time-out, except SessionStart, which host_a delivers only to command
 * hooks (the hook client), and the transcript events
 * ({@linkcode HOST_A_TRANSCRIPT_EVENTS}), which run the forwarder (unless
 * `transcript` is false: the model gateway records the turns); `command`
 * mode uses command hooks everywhere.
 *
 * @param o Ingest URL, the two commands, mode.
 * @returns The plan.
 */
export function hostAPlan(o: HostAPlanOptions): HookPlan {
  return {
    host: "host_a",
    events: HOST_A_EVENTS.map((event) => {
      const transcript = o.transcript !== false &&
        HOST_A_TRANSCRIPT_EVENTS.has(event);
      const entry: HookEntry = o.mode === "http" && event !== "SessionStart" &&
          !transcript
        ? { type: "http", url: o.hookUrl, timeout: HOST_A_HTTP_TIMEOUT_S }
        : {
          type: "command",
          command: transcript ? o.transcriptCommand ?? o.command : o.command,
          timeout: HOST_A_COMMAND_TIMEOUT_S,
        };
      return HOST_A_TOOL_EVENTS.has(event)
        ? { event, entry, matcher: "*" }
        : { event, entry };
    }),
  };
}

/**
 * host_b events whose only record is the model's side (`model.requested`,
 * `model.responded`): left out when the model gateway records every model
 * call (`install gemini-cli --gateway`), so each call has one pair, the
 * gateway's (the router's classifier call too, which no hook sees).
 */
export const HOST_B_MODEL_EVENTS: ReadonlySet<string> = new Set([
  "BeforeToolSelection",
  "AfterModel",
]);

/**
 * The host_b plan: command hooks (the hook client) with a 10,000 ms
 * time-out; with `model: false` (the model gateway records the model's
 * side) without {@linkcode HOST_B_MODEL_EVENTS}.
 *
 * @param o The command hook; whether the hooks record the model's side
 *   (default true).
 * @returns The plan.
 */
export function hostBPlan(
  o: { command: string; model?: boolean },
): HookPlan {
  return {
    host: "host_b",
    events: HOST_B_EVENTS.filter((e) =>
      o.model !== false || !HOST_B_MODEL_EVENTS.has(e)
    ).map((event) => ({
      event,
      entry: {
        type: "command",
        command: o.command,
        name: "harness",
        timeout: HOST_B_TIMEOUT_MS,
      },
    })),
  };
}

/**
 * Whether an entry is one the harness installed for a host.
 *
 * @param entry A hook entry.
 * @param host Host name.
 * @returns True for ours.
 */
export function isHarnessEntry(entry: unknown, host: string): boolean {
  if (typeof entry !== "object" || entry === null) return false;
  const e = entry as HookEntry;
  if (e.type === "http" && typeof e.url === "string") {
    return new RegExp(`/hook/${host}(\\?|$)`).test(e.url);
  }
  if (e.type === "command" && typeof e.command === "string") {
    return new RegExp(`ingest\\.ts'? hook ${host}\\b`).test(e.command);
  }
  return false;
}

function clone(v: Settings): Settings {
  return JSON.parse(JSON.stringify(v));
}

/**
 * Remove every harness entry of a host; prune groups and events left empty,
 * and `hooks` itself when it ends up empty and `keepEmptyHooks` is false.
 *
 * @param settings Current settings.
 * @param host Host name.
 * @param keepEmptyHooks Keep an empty `hooks` object (it was there before).
 * @returns New settings (the input is not changed).
 */
export function removeHarnessHooks(
  settings: Settings,
  host: string,
  keepEmptyHooks = true,
): Settings {
  const out = clone(settings);
  const hooks = out.hooks;
  if (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)) {
    return out;
  }
  const h = hooks as Record<string, unknown>;
  for (const [event, groups] of Object.entries(h)) {
    if (!Array.isArray(groups)) continue;
    const kept = [];
    let touched = false;
    for (const g of groups) {
      const list = (g as { hooks?: unknown })?.hooks;
      if (!Array.isArray(list)) {
        kept.push(g);
        continue;
      }
      const rest = list.filter((e) => !isHarnessEntry(e, host));
      if (rest.length !== list.length) touched = true;
      if (rest.length > 0) kept.push({ ...(g as object), hooks: rest });
      else if (rest.length === list.length) kept.push(g);
    }
    if (!touched) continue;
    if (kept.length > 0) h[event] = kept;
    else delete h[event];
  }
  if (!keepEmptyHooks && Object.keys(h).length === 0) delete out.hooks;
  return out;
}

/**
 * Add a plan's entries (after removing any earlier harness entries, so
 * installing twice changes nothing).
 *
 * @param settings Current settings.
 * @param plan What to add.
 * @returns New settings.
 * @throws {TypeError} When `hooks` exists but is not an object.
 */
export function addHarnessHooks(settings: Settings, plan: HookPlan): Settings {
  if (
    settings.hooks !== undefined &&
    (typeof settings.hooks !== "object" || settings.hooks === null ||
      Array.isArray(settings.hooks))
  ) {
    throw new TypeError(
      `The settings' "hooks" is not an object; fix it by hand before installing`,
    );
  }
  const out = removeHarnessHooks(settings, plan.host);
  const hooks = (out.hooks ?? {}) as Record<string, unknown[]>;
  for (const { event, entry, matcher } of plan.events) {
    const groups = Array.isArray(hooks[event]) ? hooks[event] : [];
    groups.push(matcher ? { matcher, hooks: [entry] } : { hooks: [entry] });
    hooks[event] = groups;
  }
  out.hooks = hooks;
  return out;
}
