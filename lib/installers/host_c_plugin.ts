/**
 * The OpenCode (host_c) plugin the installer writes. It wraps OpenCode's
 * plugin hooks and bus events into `harness.host_c-hook.v1` envelopes and
 * posts each to `<ingest url>/hook/host_c`, with a short time-out, failing
 * open. It also reports what OpenCode signals differently:
 *
 * - a call that throws (missing file, refused permission) has no
 *   `tool.execute.after`; the plugin turns the bus event
 *   `message.part.updated` with `state.status = "error"` into a
 *   `tool.execute.after` envelope with `error`;
 * - a session usually ends by the process exiting: on `dispose` the plugin
 *   posts `session.ended` for every session it saw that was not deleted;
 * - a call the user rejected (`permission.replied` with `reply: "reject"`
 *   for the call's `permission.asked`) or that a permission rule denied
 *   (OpenCode's fixed "has specified a rule which prevents" error) is
 *   posted with `refused: true`;
 * - the assistant's text parts, once finished (`time.end`), are posted as
 *   `message.text`; the session's `directory` goes with `session.created`
 *   as `cwd`.
 *
 * With the model gateway (`install opencode --gateway`): on a model request
 * whose provider's base URL is the ingest server's (`<url>/v1`, or a named
 * package's `<url>/p/NAME/v1`), `chat.headers` adds `x-harness-episode`
 * (the session id, which the adapter makes the episode id) and, when the
 * plugin has one, `x-harness-capture`: the gateway then records the model's
 * side (requests, answers, tokens) into the session's own episode, and the
 * plugin's tool calls, texts and outcomes stay the only ones. It first
 * waits for the session's `session.created` post, so the server knows the
 * episode is the plugin's before the gateway records into it. The
 * assistant messages of such a provider are not posted as
 * `model.responded` (the gateway has them, with the upstream's tokens).
 * Requests to any other base URL get no header of ours.
 *
 * It never forwards `config`, `chat.params`, `chat.headers` or `shell.env`
 * (they carry the provider key: from `chat.headers` it reads only the
 * session id and the base URL); from `config` it reads only the MCP server
 * names, to tag MCP tools with their server.
 *
 * @module
 */

/** Options baked into the plugin file. */
export interface HostCPluginOptions {
  /**
   * Ingest server base URL (`HARNESS_INGEST_URL` overrides it at run time).
   * @default "http://127.0.0.1:8848"
   */
  url?: string;
  /**
   * Time-out of each post in milliseconds (`HARNESS_HOOK_TIMEOUT` overrides it).
   * @default 1000
   */
  timeoutMs?: number;
  /** Capture pinned at install (wins over `HARNESS_CAPTURE_ID`). */
  capture?: string | null;
}

// Over 80 lines: one template literal, the plugin's own source.
/**
 * The plugin's JavaScript source.
 *
 * @param options URL and time-out defaults.
 * @returns An ES module exporting `HarnessPlugin`.
 */
export function hostCPluginSource(options: HostCPluginOptions = {}): string {
  const url = options.url ?? "http://127.0.0.1:8848";
  const timeout = options.timeoutMs ?? 1000;
  return `// harness: capture plugin for OpenCode (written by "ingest.ts install host_c").
// Posts plugin hooks as harness.host_c-hook.v1 envelopes to the harness ingest
// server. Fails open: a down or slow server never breaks OpenCode.
const DEFAULT_URL = ${JSON.stringify(url)};
const DEFAULT_TIMEOUT_MS = ${JSON.stringify(timeout)};
const PINNED_CAPTURE = ${JSON.stringify(options.capture ?? null)};
const SCHEMA = "harness.host_c-hook.v1";
const MAX_TIMEOUT_MS = 60000;

// HARNESS_HOOK_TIMEOUT as the forwarder reads it: decimal digits only,
// clamped; anything else the default.
function timeoutOf(value) {
  if (typeof value !== "string" || !/^[0-9]+$/.test(value)) return DEFAULT_TIMEOUT_MS;
  const digits = value.replace(/^0+/, "");
  if (digits === "") return DEFAULT_TIMEOUT_MS;
  return digits.length > 5 ? MAX_TIMEOUT_MS : Math.min(Number(digits), MAX_TIMEOUT_MS);
}

// Whether a provider's base URL is the harness model gateway on one of
// these servers: <server>/v1 or a named package's <server>/p/NAME/v1.
function throughGateway(baseURL, servers) {
  if (typeof baseURL !== "string") return false;
  let u;
  try {
    u = new URL(baseURL);
  } catch {
    return false;
  }
  const path = u.pathname.replace(/\\/+$/, "");
  return servers.some((s) => {
    try {
      const g = new URL(s);
      const root = g.pathname.replace(/\\/+$/, "");
      return g.origin === u.origin &&
        (path === root + "/v1" || (path.startsWith(root + "/p/") && path.endsWith("/v1")));
    } catch {
      return false;
    }
  });
}

function env(name) {
  try {
    return globalThis.process?.env?.[name] || undefined;
  } catch {
    return undefined;
  }
}

export const HarnessPlugin = async () => {
  const base = (env("HARNESS_INGEST_URL") || DEFAULT_URL).replace(/\\/+$/, "");
  const cap = PINNED_CAPTURE || env("HARNESS_CAPTURE_ID");
  const token = env("HARNESS_INGEST_TOKEN");
  const timeoutMs = timeoutOf(env("HARNESS_HOOK_TIMEOUT"));
  const servers = [base, DEFAULT_URL];
  const target = base + "/hook/host_c" + (cap ? "?cap=" + encodeURIComponent(cap) : "");
  const sessions = new Set();
  const ended = new Set();
  const mcpServers = [];
  const pending = new Map();

  const inflight = new Set();
  const answered = new Set();
  const asked = new Map();
  const rejected = new Set();
  const roles = new Map();
  const texts = new Set();
  const created = new Map();
  const viaGateway = new Set();

  function post(hook, sessionId, extra) {
    const p = send(hook, sessionId, extra);
    inflight.add(p);
    p.finally(() => inflight.delete(p));
    return p;
  }

  async function send(hook, sessionId, extra) {
    if (!sessionId) return;
    const body = { schema_version: SCHEMA, hook, session_id: sessionId, ts: new Date().toISOString(), ...extra };
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), timeoutMs);
    try {
      const res = await fetch(target, {
        method: "POST",
        headers: token
          ? { "content-type": "application/json", authorization: "Bearer " + token }
          : { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: ctl.signal,
      });
      await res.body?.cancel();
    } catch {
      // Fail open: the agent carries on.
    } finally {
      clearTimeout(timer);
    }
  }

  function mcpOf(tool) {
    for (const s of mcpServers) {
      if (typeof tool === "string" && tool.startsWith(s + "_")) {
        return { mcp_server: s, mcp_tool: tool.slice(s.length + 1) };
      }
    }
    return {};
  }

  return {
    config: async (config) => {
      // Only MCP server names; the config itself holds provider keys.
      for (const name of Object.keys(config?.mcp ?? {})) mcpServers.push(name);
    },
    event: async ({ event }) => {
      const p = event?.properties ?? {};
      switch (event?.type) {
        case "session.created": {
          const id = p.info?.id ?? p.sessionID;
          sessions.add(id);
          const sent = post("session.created", id, {
            parent_session_id: p.info?.parentID ?? null,
            ...(typeof p.info?.directory === "string" ? { cwd: p.info.directory } : {}),
          });
          created.set(id, sent);
          await sent;
          break;
        }
        case "session.deleted": {
          const id = p.info?.id ?? p.sessionID;
          if (ended.has(id)) break;
          ended.add(id);
          await post("session.deleted", id, {});
          break;
        }
        case "session.error":
          await post("session.error", p.sessionID, { error: p.error ?? null });
          break;
        case "session.status":
          if (p.status?.type === "retry") {
            await post("session.retry", p.sessionID, {
              attempt: p.status.attempt ?? null,
              message: p.status.message ?? null,
            });
          }
          break;
        case "session.compacted":
          await post("session.compacted", p.sessionID, {});
          break;
        case "permission.asked":
          if (p.tool?.callID) asked.set(p.id, p.tool.callID);
          break;
        case "permission.replied":
          if (p.reply === "reject" && asked.has(p.requestID)) rejected.add(asked.get(p.requestID));
          break;
        case "message.updated": {
          const info = p.info ?? {};
          if (info.id && info.role) roles.set(info.id, info.role);
          // Once per assistant message, when the host has finished it.
          if (info.role !== "assistant" || !info.finish || !info.time?.completed) break;
          if (answered.has(info.id)) break;
          answered.add(info.id);
          // The model gateway records this provider's calls and tokens.
          if (viaGateway.has(info.providerID)) break;
          await post("model.responded", info.sessionID, {
            model: info.modelID ?? null,
            provider: info.providerID ?? null,
            finish: info.finish,
            tokens: info.tokens ?? {},
          });
          break;
        }
        case "message.part.updated": {
          const part = p.part;
          if (
            part?.type === "text" && part.time?.end && !part.synthetic && part.text &&
            roles.get(part.messageID) !== "user" && !texts.has(part.id)
          ) {
            texts.add(part.id);
            await post("message.text", part.sessionID, { text: part.text });
            break;
          }
          if (part?.type !== "tool" || part.state?.status !== "error") break;
          const why = String(part.state.error ?? "error");
          const call = pending.get(part.callID);
          pending.delete(part.callID);
          await post("tool.execute.after", part.sessionID, {
            call_id: part.callID,
            tool: part.tool,
            args: part.state.input ?? call?.args ?? {},
            error: { message: why },
            ...(rejected.has(part.callID) || why.includes("has specified a rule which prevents")
              ? { refused: true }
              : {}),
            ...mcpOf(part.tool),
          });
          break;
        }
      }
    },
    "chat.headers": async (input, output) => {
      // Only the session id and the base URL are read: the input holds the
      // provider's key.
      const session = input?.sessionID;
      const baseURL = input?.provider?.options?.baseURL ?? input?.model?.api?.url;
      if (typeof session !== "string" || session === "" || !throughGateway(baseURL, servers)) return;
      if (!output || typeof output.headers !== "object" || output.headers === null) return;
      const provider = input?.model?.providerID ?? input?.provider?.id;
      if (typeof provider === "string") viaGateway.add(provider);
      // The server learns the episode is the plugin's before the gateway
      // records into it.
      await created.get(session);
      output.headers["x-harness-episode"] = session;
      if (cap) output.headers["x-harness-capture"] = cap;
    },
    "chat.message": async (input, output) => {
      const text = (output?.parts ?? [])
        .filter((x) => x?.type === "text" && typeof x.text === "string")
        .map((x) => x.text)
        .join("\\n");
      const model = input?.model?.modelID;
      await post("chat.message", input?.sessionID, { text, ...(model ? { model } : {}) });
    },
    "tool.execute.before": async (input, output) => {
      pending.set(input?.callID, { args: output?.args ?? {} });
      await post("tool.execute.before", input?.sessionID, {
        call_id: input?.callID,
        tool: input?.tool,
        args: output?.args ?? {},
        ...mcpOf(input?.tool),
      });
    },
    "tool.execute.after": async (input, output) => {
      const call = pending.get(input?.callID);
      pending.delete(input?.callID);
      await post("tool.execute.after", input?.sessionID, {
        call_id: input?.callID,
        tool: input?.tool,
        args: input?.args ?? call?.args ?? {},
        result: output ?? null,
        ...mcpOf(input?.tool),
      });
    },
    dispose: async () => {
      // Bus events are not awaited by the host: wait for what is in flight
      // (a session.deleted just sent) before the process goes.
      await Promise.allSettled([...inflight]);
      for (const id of sessions) {
        if (!ended.has(id)) await post("session.ended", id, { reason: "disposed" });
      }
    },
  };
};
`;
}
