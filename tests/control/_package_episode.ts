/**
 * Test helper: the events the model gateway records for an episode served
 * by a package, in the shape it records them (`lib/model_gateway/recorder.ts`,
 * and `model.requested.payload.package = {id, outcome, reason?}` on every
 * exchange under a package): a served lookup before any upstream request, a
 * forwarded request whose first answer the package refused (tokens
 * charged) and whose second it let through, a second served lookup, and a
 * request the package did not fit.
 *
 * @module
 */
import type { UnsealedEvent } from "../../lib/trace/mod.ts";
import {
  episodeStarted,
  message,
  toolCallCompleted,
  toolCallStarted,
} from "../../lib/trace/mod.ts";
import {
  modelRequested,
  modelResponded,
} from "../../lib/trace/model_events.ts";
import { fixedContext } from "../_helpers.ts";

/** The package's id as the gateway writes it. */
export const PKG = "retail@sha256:" + "ab".repeat(32);
/** Why the last request passed through. */
export const PASS_REASON =
  "the request offers a tool the package does not know: web_search (compile with --effects naming every tool the agent offers)";
/** Why the model's cancel was refused. */
export const REFUSE_REASON =
  "order_id #W0000001 is not one the conversation showed (candidates: #W2611340)";

const GW = "model_gateway";

/**
 * The events of one served episode.
 *
 * @param capture Capture id.
 * @param episode Episode id.
 * @returns Events in order.
 */
export function servedEpisode(
  capture: string,
  episode: string,
): UnsealedEvent[] {
  const ctx = {
    ...fixedContext(capture, episode),
    newId: (() => {
      let n = 0;
      return () => `evt_${episode}_${++n}`;
    })(),
  };
  const out: UnsealedEvent[] = [episodeStarted(ctx)];
  const request = (pkg: Record<string, unknown>) => {
    const ev = modelRequested(ctx, {
      request: { wire: "openai_chat", model: "gpt-agent" },
      source: GW,
      package: pkg,
    });
    out.push(ev);
    return ev.event_id;
  };
  const answer = (
    parent: string,
    payload: Record<string, unknown>,
  ) =>
    out.push(modelResponded(ctx, { source: GW, ...payload } as never, {
      parentEventId: parent,
    }));
  const call = (
    id: string,
    tool: string,
    args: Record<string, unknown>,
    result: unknown,
  ) => {
    const s = toolCallStarted(ctx, {
      tool: { host_name: tool, logical_id: null },
      arguments: args,
      host_call_id: id,
    });
    out.push(
      s,
      toolCallCompleted(ctx, {
        tool: { host_name: tool, logical_id: null },
        arguments: args,
        host_call_id: id,
        result,
      }, { parentEventId: s.event_id }),
    );
  };
  out.push(message(ctx, {
    role: "user",
    text: "Hi, my email is sofia.li7352@example.com; cancel my order please.",
  }));
  // 1. Served before any upstream request: no estimate.
  let r = request({ id: PKG, outcome: "served" });
  answer(r, {
    served_by: PKG,
    status: 200,
    response: {
      text: "",
      tool_calls: ["find_user_id_by_email"],
      tool_call_ids: ["call_pkg_1"],
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  });
  call("call_pkg_1", "find_user_id_by_email", {
    email: "sofia.li7352@example.com",
  }, "sofia_li_9219");
  // 2. Forwarded: the model's cancel is refused, then its next answer passes.
  r = request({ id: PKG, outcome: "forwarded" });
  answer(r, {
    status: 200,
    response: {
      text: "",
      tool_calls: ["cancel_pending_order"],
      tool_call_ids: ["call_m_1"],
      usage: { input_tokens: 900, output_tokens: 30 },
    },
    refused: [{
      tool: "cancel_pending_order",
      reason: REFUSE_REASON,
      arguments: { order_id: "#W0000001", reason: "no longer needed" },
    }],
  });
  answer(r, {
    status: 200,
    response: {
      text: "Which order would you like to cancel?",
      tool_calls: [],
      tool_call_ids: [],
      usage: { input_tokens: 1000, output_tokens: 20 },
    },
  });
  out.push(message(ctx, { role: "user", text: "Order #W2611340." }));
  // 3. Served after an upstream request: its prompt (1000) is the estimate.
  r = request({ id: PKG, outcome: "served" });
  answer(r, {
    served_by: PKG,
    status: 200,
    response: {
      text: "",
      tool_calls: ["get_order_details"],
      tool_call_ids: ["call_pkg_2"],
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  });
  call("call_pkg_2", "get_order_details", { order_id: "#W2611340" }, {
    status: "pending",
  });
  // 4. Passed through, untouched.
  r = request({ id: PKG, outcome: "passed_through", reason: PASS_REASON });
  answer(r, {
    status: 200,
    response: {
      text: "Let me look that up.",
      tool_calls: [],
      tool_call_ids: [],
      usage: { input_tokens: 1500, output_tokens: 10 },
    },
  });
  return out;
}
