/**
 * Test helper: requests of Claude Code's own shape (its tools and system
 * prompt from `fixtures/model_requests/host_a/basic/`) for the lab's
 * `dataflow` scenario on held-out variant 8, as the host sends them while
 * a tree-form package is served: the opening, then each call with the
 * host's answer.
 *
 * @module
 */
import { anthropicMessagesWire } from "../../lib/model_gateway/wires/anthropic_messages/read.ts";
import type { NormRequest } from "../../lib/model_gateway/wire_types.ts";
import { DATAFLOW_PROMPT } from "../../tools/_dataflow_model.ts";
import {
  DATAFLOW_VARIANTS,
  variantFiles,
} from "../../tools/_dataflow_variants.ts";

/** A content block. */
export type Block = Record<string, unknown>;
/** A message of the Messages API. */
export type Message = { role: string; content: string | Block[] };

const BASIC = JSON.parse(
  Deno.readTextFileSync(
    new URL(
      "../../fixtures/model_requests/host_a/basic/001_v1_messages.json",
      import.meta.url,
    ),
  ),
);
/** Claude Code's tools, as its requests offer them. */
export const TOOLS: Block[] = BASIC.tools;

/** The working folder the requests name. */
export const CWD = "/home/dev/agent-demo/work/dataflow-8";
/** The variant. */
export const V8 = DATAFLOW_VARIANTS[7];
/** Its files. */
export const FILES = variantFiles(V8);

/**
 * A Claude Code request body: its system prompt and tools, this conversation.
 *
 * @param messages The conversation after the host's environment message.
 * @param change Fields to set on the body.
 * @returns The body.
 */
export function body(
  messages: Message[],
  change: Block = {},
): Record<string, unknown> {
  const out = structuredClone(BASIC);
  const env = (out.messages as Message[]).find((m) => m.role === "system")!;
  const text = JSON.stringify(env).replaceAll(
    "/home/dev/agent-demo/work/basic",
    CWD,
  );
  out.messages = [JSON.parse(text), ...messages];
  return { ...out, ...change };
}

/**
 * The same, as the gateway reads it.
 *
 * @param messages The conversation.
 * @param change Fields to set on the body.
 * @returns The request.
 */
export function request(messages: Message[], change: Block = {}): NormRequest {
  return anthropicMessagesWire.request(body(messages, change));
}

/**
 * The user's opening message, with a reminder block as Claude Code adds one.
 *
 * @param prompt The user's words.
 * @returns The message.
 */
export function opening(prompt: string = DATAFLOW_PROMPT): Message {
  return {
    role: "user",
    content: [
      {
        type: "text",
        text:
          "<system-reminder>\nContext Claude Code adds.\n</system-reminder>",
      },
      { type: "text", text: prompt },
    ],
  };
}

let n = 0;
/**
 * The agent called `name(input)` and the host answered `result`.
 *
 * @param name Tool.
 * @param input Arguments.
 * @param result The host's answer text.
 * @returns The two messages.
 */
export function turn(name: string, input: Block, result: string): Message[] {
  const id = `toolu_test${++n}`;
  return [
    {
      role: "assistant",
      content: [{ type: "tool_use", id, name, input }],
    },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content: result }],
    },
  ];
}

/** Read's numbered lines. */
export const numbered = (text: string): string =>
  text.split("\n").map((l, i) => `${i + 1}\t${l}`).join("\n");

/** grep */
export const GREP = {
  command: "grep '^next:' queue.txt",
  description: "Find the next pending order",
};
/** read */
export const READ = { file_path: `${CWD}/orders/${V8.order}.json` };
/** ledger */
export const LEDGER = {
  command: `grep '^${V8.customer},' ledger.csv`,
  description: `Look up customer ${V8.customer} in the ledger`,
};
/** after_ledger */
export const AFTER_LEDGER: Message[] = [
  opening(),
  ...turn("Bash", GREP, `next: ${V8.order}`),
  ...turn("Read", READ, numbered(FILES[`orders/${V8.order}.json`])),
  ...turn("Bash", LEDGER, `${V8.customer},${V8.balance}`),
];
