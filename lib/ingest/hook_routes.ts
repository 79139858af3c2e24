/**
 * `POST /hook/<host>?cap=<id>`: a host's hook payload, mapped by its
 * adapter into events of the capture `cap` names (else the active capture,
 * else `default`). `<host>` is the seed's name (`/hook/host_a`, the binding
 * wire path) or the host's real name (`/hook/claude-code`): the two paths
 * are one route, recording the same events (`source.host` is the seed's
 * name either way; `lib/trace/hosts.ts`). Claude Code answers 204 (silent
 * for the host); Gemini CLI and OpenCode 200 `{ok: true, capture_id,
 * events, head}`. What goes wrong once the hook is taken answers HTTP 200
 * `{ok: false, error}` (`error_answer.ts`).
 *
 * @module
 */
import { checkJsonShape } from "../trace/validate.ts";
import { validateId } from "../trace/ids.ts";
import { adapterFor, HOSTS } from "../adapters/host_adapters.ts";
import { hostByName } from "../trace/hosts.ts";
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import { messageOf } from "./error_answer.ts";
import { json } from "./json_answer.ts";
import type { HandlerContext } from "./handler_types.ts";
import type { Route, RouteMatch } from "./route_table.ts";

/**
 * The hook routes: for each host with an adapter, its seed path
 * (`/hook/host_a`) and its real-name path (`/hook/claude-code`), one
 * handler.
 *
 * @param ctx What the handler's routes share.
 * @returns The routes.
 */
export function hookRoutes(ctx: HandlerContext): Route[] {
  return HOSTS.flatMap((host) => {
    const { name, display } = hostByName(host)!;
    return [host, name].map((word): Route => ({
      method: "POST",
      path: `/hook/${word}`,
      family: "hook",
      auth: "bearer",
      body: "json",
      what: `${display}'s hook payloads (/hook/${host} and /hook/${name}), ` +
        `mapped to events by its adapter`,
      handle: (req: IngestRequest, match: RouteMatch) =>
        hook(ctx, { req, host, query: match.query }),
    }));
  });
}

async function hook(
  ctx: HandlerContext,
  { req, host, query }: { req: IngestRequest; host: string; query: string },
): Promise<IngestAnswer> {
  const { options } = ctx;
  const cap = new URLSearchParams(query).get("cap") ||
    options.activeCapture?.() || ctx.defaultCapture;
  validateId("capture", cap);
  const text = await req.text(ctx.limit);
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (err) {
    throw new SyntaxError(`The hook body is not JSON (${messageOf(err)})`);
  }
  checkJsonShape(payload);
  // The correlator and session memory are restored first (issue 44); a
  // hook held for it keeps the time it came (hosts give none).
  const arrived = new Date();
  const held = await ctx.afterRestore("hooks");
  const events = adapterFor(host)!(payload, {
    ...(held ? { now: () => arrived } : {}),
    captureId: cap,
    model: options.model ?? null,
    correlator: ctx.correlator,
    sessions: ctx.sessions,
    fullModelRequests: options.fullModelRequests,
  });
  const sealed = ctx.record(ctx.redact(events));
  if (sealed.length > 0) ctx.gateway?.observe(sealed[0]);
  if (host === "host_a") return { status: 204, headers: {}, body: null };
  const last = sealed[sealed.length - 1];
  return json(200, {
    ok: true,
    capture_id: cap,
    events: sealed.length,
    // The head this acknowledgement produced: keep it, verify against it.
    ...(last
      ? { head: { sequence: last.sequence, hash: last.event_hash } }
      : {}),
  });
}
