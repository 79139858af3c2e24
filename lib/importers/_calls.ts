/**
 * Tool calls in imported trajectories and the party that made each one:
 * the agent (`assistant`) or, in dual-control conversations (τ² telecom),
 * the user on their own device (`user`: a call on a user message, τ²'s
 * `requestor: "user"`). A tool result answers a call of the same party;
 * one naming a call of the other party is an {@linkcode ImportError}.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import { ImportError } from "./import_error.ts";

/** Who made a call: the agent or the user (dual control). */
export type Party = "assistant" | "user";

/** One tool call read from a message. */
export interface ParsedCall {
  /** Tool name. */
  name: string;
  /** Arguments (an object; `{}` when the file has none). */
  args: Record<string, unknown>;
  /** The file's call id, or `<message>_<call>` when it has none. */
  id: string;
}

const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The party a message's `requestor` names, or null when it names none. */
export function requestorOf(m: Record<string, unknown>): Party | null {
  return m.requestor === "user" || m.requestor === "assistant"
    ? m.requestor
    : null;
}

/** What {@linkcode parseCall} needs besides the call. */
export interface ParseCallOptions {
  /** How calls are written: `openai` (function.name, JSON text) or `tau2`. */
  style: "openai" | "tau2";
  /** The party of the message that carries the call. */
  party: Party;
  /** The domain's tools (null: any). */
  tools: readonly string[] | null;
  /** Message index, for the generated id. */
  message: number;
  /** Call index within the message. */
  index: number;
  /** Where, for errors: `trajectory 0 (task 3), message 4, tool call 1`. */
  where: string;
}

/**
 * Read one tool call of a message.
 *
 * @param c The call as written.
 * @param options Style, party, domain tools, position.
 * @returns Name, arguments and id.
 * @throws {ImportError} When the call has no valid name, its arguments are not JSON, its tool is outside the domain, or its `requestor` is not the party of its message.
 */
export function parseCall(c: unknown, options: ParseCallOptions): ParsedCall {
  const { where } = options;
  if (!isObj(c)) throw new ImportError(where, "not an object");
  const fn = options.style === "openai" && isObj(c.function) ? c.function : c;
  const name = fn.name;
  if (typeof name !== "string") throw new ImportError(where, "no tool name");
  if (!TOOL_NAME.test(name)) {
    throw new ImportError(
      where,
      `${JSON.stringify(name.slice(0, 80))} is not a tool name`,
    );
  }
  const said = requestorOf(c);
  if (said !== null && said !== options.party) {
    throw new ImportError(
      where,
      `the call of ${name} is marked requestor ${
        JSON.stringify(said)
      } on a ${options.party} message; a call belongs to the party whose message carries it`,
    );
  }
  if (options.tools && !options.tools.includes(name)) {
    throw new ImportError(
      where,
      `unknown tool ${JSON.stringify(name)} (the domain has ${
        options.tools.join(", ")
      })`,
    );
  }
  let args = fn.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args || "{}");
    } catch {
      throw new ImportError(where, "arguments are not JSON");
    }
  }
  return {
    name,
    args: isObj(args) ? args : {},
    id: typeof c.id === "string" ? c.id : `${options.message}_${options.index}`,
  };
}

/** A call waiting for its result. */
export interface OpenCall {
  /** Its `tool.call.started` event. */
  event: UnsealedEvent;
  /** Who made it. */
  party: Party;
  /** Index of the message that made it. */
  message: number;
}

function toolName(ev: UnsealedEvent): string {
  return (ev.payload.tool as { host_name: string }).host_name;
}

/** What a tool result says about the call it answers. */
export interface ToolAnswer {
  /** The call id it names, or null. */
  id: string | null;
  /** The tool it names (old logs name the tool instead of the call), or null. */
  name: string | null;
  /** The party it says it answers (τ²'s `requestor`), or null. */
  party: Party | null;
}

/** The calls of one trajectory waiting for their results, in order. */
export class CallLedger {
  #open = new Map<string, OpenCall>();

  /**
   * Record a call made.
   *
   * @param id The call id.
   * @param call Its event, party and message.
   */
  open(id: string, call: OpenCall): void {
    this.#open.set(id, call);
  }

  /**
   * Take the call a tool result answers.
   *
   * @param answer The id, tool and party the result names.
   * @param where Where the result is, for errors.
   * @returns The call, no longer open.
   * @throws {ImportError} When no open call matches, or the result names a call of the other party.
   */
  take(answer: ToolAnswer, where: string): OpenCall {
    let call = answer.id !== null ? this.#open.get(answer.id) : undefined;
    if (!call && answer.id === null && answer.name !== null) {
      // Old logs name the tool instead of the call: the oldest open call of it.
      call = [...this.#open.values()].find((c) =>
        toolName(c.event) === answer.name &&
        (answer.party === null || c.party === answer.party)
      );
    }
    if (!call) {
      throw new ImportError(
        where,
        `a tool result without its call${
          answer.id ? ` (id ${answer.id})` : ""
        }`,
      );
    }
    if (answer.party !== null && answer.party !== call.party) {
      throw new ImportError(
        where,
        `a tool result marked requestor ${
          JSON.stringify(answer.party)
        } answers the ${call.party}'s call of ${
          toolName(call.event)
        } (id ${call.event.payload.host_call_id}, message ${call.message}); a result must answer a call of the party that made it`,
      );
    }
    this.#open.delete(call.event.payload.host_call_id as string);
    return call;
  }

  /** The calls still open, oldest first. */
  pending(): OpenCall[] {
    return [...this.#open.values()];
  }
}
