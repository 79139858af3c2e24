/**
 * A scripted model: a recorded τ²-bench agent turned into a script
 * (`scriptFromTau2`) and a walker that answers each request with the next
 * recorded step the request does not already satisfy (`ScriptWalker`). It
 * decides nothing; it lets a package's prefetched lookups save model
 * requests, and it repeats a refused write because a recording can only
 * repeat itself.
 *
 * @module
 */
import type { ChatMessage, ChatToolCall } from "../lib/models/chat_types.ts";
import { canonicalJson } from "../lib/trace/canonical_json.ts";

/** A recorded tool call. */
export interface ScriptCall {
  /** Tool name. */
  name: string;
  /** Arguments as recorded. */
  arguments: Record<string, unknown>;
}

/** One recorded assistant message after the first user message. */
export interface ScriptTurn {
  /** Its text (null when it had none). */
  content: string | null;
  /** Its tool calls, in order (empty when none). */
  tool_calls: ScriptCall[];
}

/** A recorded episode as a script. */
export interface Script {
  /** The simulation's id. */
  id: string;
  /** The assistant's text before the first user message, if any. */
  greeting: string | null;
  /** The recorded user's messages, in order. */
  users: string[];
  /** The assistant's messages after the first user message, in order. */
  turns: ScriptTurn[];
}

/** A τ² message, as the simulation files hold them. */
export interface Tau2Message {
  /** `assistant`, `user` or `tool`. */
  role: string;
  /** Text. */
  content?: string | null;
  /** Tool calls (arguments as an object). */
  tool_calls?:
    | Array<{ id?: string; name: string; arguments?: unknown }>
    | null;
}

/** A τ² simulation (the fields the script needs). */
export interface Tau2Simulation {
  /** Simulation id. */
  id: string;
  /** Its messages. */
  messages: Tau2Message[];
}

function textOf(content: unknown): string | null {
  return typeof content === "string" && content.trim() !== "" ? content : null;
}

function argumentsOf(raw: unknown, where: string): Record<string, unknown> {
  let value = raw ?? {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (err) {
      throw new SyntaxError(`${where}: arguments are not JSON`, {
        cause: err,
      });
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${where}: arguments must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/**
 * Turn a τ² simulation into a script: the greeting (assistant text before
 * any user message), the user messages in order, and the assistant
 * messages after the first user message as turns.
 *
 * @param simulation A simulation of a τ² results file.
 * @returns The script.
 * @throws {TypeError} When the simulation has no id or messages, or a call has no name or non-object arguments.
 * @throws {SyntaxError} When a call's arguments are a string that is not JSON.
 */
export function scriptFromTau2(simulation: Tau2Simulation): Script {
  if (
    typeof simulation?.id !== "string" || !Array.isArray(simulation.messages)
  ) {
    throw new TypeError(
      "A τ² simulation needs a string id and a messages array",
    );
  }
  const script: Script = {
    id: simulation.id,
    greeting: null,
    users: [],
    turns: [],
  };
  let seenUser = false;
  simulation.messages.forEach((m, i) => {
    if (m.role === "user") {
      seenUser = true;
      script.users.push(typeof m.content === "string" ? m.content : "");
      return;
    }
    if (m.role !== "assistant") return;
    if (!seenUser) {
      script.greeting ??= textOf(m.content);
      return;
    }
    const calls = (m.tool_calls ?? []).map((c, k) => {
      const where = `Simulation "${simulation.id}" message ${i} call ${k}`;
      if (typeof c?.name !== "string" || c.name === "") {
        throw new TypeError(`${where}: a tool call needs a name`);
      }
      return { name: c.name, arguments: argumentsOf(c.arguments, where) };
    });
    script.turns.push({ content: textOf(m.content), tool_calls: calls });
  });
  return script;
}

/** What the walker answers: text and/or tool calls, or the end of the script. */
export type WalkerStep =
  | { content: string | null; tool_calls: ChatToolCall[] }
  | { exhausted: true };

/** Options of {@linkcode ScriptWalker}. */
export interface ScriptWalkerOptions {
  /** Tools that change state (every other tool only reads). */
  writes: ReadonlySet<string>;
  /**
   * Prefix of the tool call ids the walker makes (`<prefix><n>`).
   * @default "call_scripted_"
   */
  idPrefix?: string;
}

/** Counters of what the walker did. */
export interface WalkerStats {
  /** Answers given (the end of the script not counted). */
  answers: number;
  /** Recorded read calls dropped because the request already held their result. */
  skipped_calls: number;
  /** Turns skipped because nothing of them was left. */
  skipped_turns: number;
  /** Refused writes sent again. */
  repeated_writes: number;
}

interface SeenResult {
  id: string;
  key: string | null;
  write: boolean;
  refused: boolean;
  failed: boolean;
}

function callKey(name: string, args: unknown): string {
  return `${name}\u0000${canonicalJson(args ?? null)}`;
}

/**
 * Walks a script: each `next()` answers with the recorded turn at its
 * pointer and advances, except that
 *
 * - a recorded read is dropped when the request holds a result of the same
 *   tool with canonically equal arguments, after the last successful
 *   state-changing call, that the walker's own calls did not produce and
 *   that no earlier recorded read was matched with (so a recording that
 *   reads twice is replayed as is, and a lookup shown by a package saves
 *   exactly one recorded read); a turn left with nothing is skipped;
 * - when the last answer's state-changing call was last answered with a
 *   tool message starting `Refused`, that call is sent again as recorded
 *   and the pointer stays.
 *
 * A write counts as successful unless its result starts with `Refused` or
 * `Error`. Tool call ids are fresh per answer. The walker is pure: no
 * clock, no I/O.
 */
export class ScriptWalker {
  readonly #script: Script;
  readonly #writes: ReadonlySet<string>;
  readonly #prefix: string;
  #pointer = 0;
  #ids = 0;
  #own = new Set<string>();
  #consumed = new Set<string>();
  #lastWrites: ScriptCall[] = [];
  #stats: WalkerStats = {
    answers: 0,
    skipped_calls: 0,
    skipped_turns: 0,
    repeated_writes: 0,
  };

  /**
   * Create a walker at the start of a script.
   *
   * @param script The script.
   * @param options Which tools change state.
   * @throws {TypeError} When `writes` is not a Set.
   */
  constructor(script: Script, options: ScriptWalkerOptions) {
    if (!(options?.writes instanceof Set)) {
      throw new TypeError(
        "ScriptWalker needs options.writes, the Set of state-changing tools",
      );
    }
    this.#script = script;
    this.#writes = options.writes;
    this.#prefix = options.idPrefix ?? "call_scripted_";
  }

  /** Index of the next recorded turn. */
  get position(): number {
    return this.#pointer;
  }

  /** What the walker did so far. */
  get stats(): WalkerStats {
    return { ...this.#stats };
  }

  /**
   * The next answer for a request.
   *
   * @param messages The request's conversation (tool messages must answer calls of assistant messages in it to count).
   * @returns Text and/or tool calls, or `{ exhausted: true }` past the last turn.
   */
  next(messages: readonly ChatMessage[]): WalkerStep {
    const results = this.#results(messages);
    const repeat = this.#refusedWrites(results);
    if (repeat.length) {
      this.#stats.repeated_writes += repeat.length;
      return this.#answer(null, repeat);
    }
    let lastWrite = -1;
    results.forEach((r, i) => {
      if (r.write && !r.failed) lastWrite = i;
    });
    const turns = this.#script.turns;
    while (this.#pointer < turns.length) {
      const turn = turns[this.#pointer++];
      const calls = turn.tool_calls.filter((c) => {
        if (this.#writes.has(c.name)) return true;
        const key = callKey(c.name, c.arguments);
        const hit = results.find((r, i) =>
          i > lastWrite && r.key === key && !r.refused &&
          !this.#own.has(r.id) && !this.#consumed.has(r.id)
        );
        if (!hit) return true;
        this.#consumed.add(hit.id);
        this.#stats.skipped_calls++;
        return false;
      });
      if (calls.length === 0 && turn.content === null) {
        this.#stats.skipped_turns++;
        continue;
      }
      return this.#answer(turn.content, calls);
    }
    this.#lastWrites = [];
    return { exhausted: true };
  }

  #results(messages: readonly ChatMessage[]): SeenResult[] {
    const calls = new Map<string, ChatToolCall>();
    const out: SeenResult[] = [];
    for (const m of messages) {
      if (m.role === "assistant") {
        for (const c of m.tool_calls ?? []) calls.set(c.id, c);
      } else if (m.role === "tool") {
        const call = calls.get(m.tool_call_id);
        const name = call?.name ?? m.name;
        const text = typeof m.content === "string" ? m.content : "";
        const refused = text.startsWith("Refused");
        out.push({
          id: m.tool_call_id,
          key: call && call.arguments !== null
            ? callKey(call.name, call.arguments)
            : null,
          write: this.#writes.has(name),
          refused,
          failed: refused || text.startsWith("Error"),
        });
      }
    }
    return out;
  }

  #refusedWrites(results: SeenResult[]): ScriptCall[] {
    return this.#lastWrites.filter((w) => {
      const key = callKey(w.name, w.arguments);
      const last = results.findLast((r) => r.key === key);
      return last?.refused === true;
    });
  }

  #answer(
    content: string | null,
    calls: ScriptCall[],
  ): { content: string | null; tool_calls: ChatToolCall[] } {
    this.#stats.answers++;
    this.#lastWrites = calls.filter((c) => this.#writes.has(c.name));
    const toolCalls = calls.map((c) => {
      const id = `${this.#prefix}${++this.#ids}`;
      this.#own.add(id);
      return {
        id,
        name: c.name,
        arguments: structuredClone(c.arguments),
        raw_arguments: JSON.stringify(c.arguments),
      };
    });
    return { content, tool_calls: toolCalls };
  }
}
