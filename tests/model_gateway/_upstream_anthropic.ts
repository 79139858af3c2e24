/**
 * The Anthropic Messages renderer of the test upstream: a whole message and
 * its event stream (`message_start` … `message_stop`, with `ping`).
 *
 * @module
 */
import {
  argsText,
  type Item,
  modelOf,
  pieces,
  type RenderContext,
  type UpstreamAnswer,
  type UpstreamToolCall,
  usageOf,
} from "./_upstream_answer.ts";

function toolInput(c: UpstreamToolCall): Record<string, unknown> {
  return typeof c.arguments === "string"
    ? JSON.parse(c.arguments)
    : c.arguments;
}

function messageBlocks(a: UpstreamAnswer, n: number): Item[] {
  const blocks: Item[] = [];
  if (a.text !== undefined) blocks.push({ type: "text", text: a.text });
  (a.toolCalls ?? []).forEach((c, i) =>
    blocks.push({
      type: "tool_use",
      id: c.id ?? `toolu_${n}_${i}`,
      name: c.name,
      input: toolInput(c),
    })
  );
  return blocks;
}

function messageUsage(a: UpstreamAnswer, outputTokens: number): Item {
  const u = usageOf(a);
  return {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cached_tokens,
    output_tokens: outputTokens,
  };
}

/** A whole message. */
export function messageObject(a: UpstreamAnswer, ctx: RenderContext): Item {
  return {
    id: `msg_up${ctx.n}`,
    type: "message",
    role: "assistant",
    model: modelOf(a, ctx),
    content: messageBlocks(a, ctx.n),
    stop_reason: a.stopReason ??
      (a.toolCalls?.length ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: messageUsage(a, usageOf(a).output_tokens),
  };
}

/** A message as its SSE events. */
export function messagesEvents(
  a: UpstreamAnswer,
  ctx: RenderContext,
): string[] {
  const size = a.chunkSize ?? 8;
  const out: string[] = [];
  const emit = (type: string, fields: Item) =>
    out.push(
      `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`,
    );
  const whole = messageObject(a, ctx);
  emit("message_start", {
    message: {
      ...whole,
      content: [],
      stop_reason: null,
      usage: messageUsage(a, 1),
    },
  });
  messageBlocks(a, ctx.n).forEach((block, index) => {
    if (block.type === "text") {
      emit("content_block_start", {
        index,
        content_block: { type: "text", text: "" },
      });
      if (index === 0) emit("ping", {});
      for (const text of pieces(block.text as string, size)) {
        emit("content_block_delta", {
          index,
          delta: { type: "text_delta", text },
        });
      }
    } else {
      emit("content_block_start", {
        index,
        content_block: { ...block, input: {} },
      });
      if (index === 0) emit("ping", {});
      const call = a.toolCalls![index - (a.text === undefined ? 0 : 1)];
      for (const partial_json of pieces(argsText(call), size)) {
        emit("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json },
        });
      }
    }
    emit("content_block_stop", { index });
  });
  emit("message_delta", {
    delta: { stop_reason: whole.stop_reason, stop_sequence: null },
    usage: { output_tokens: usageOf(a).output_tokens },
  });
  emit("message_stop", {});
  return out;
}
