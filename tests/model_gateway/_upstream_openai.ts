/**
 * The OpenAI renderers of the test upstream: Chat Completions (whole and
 * `chat.completion.chunk` server-sent events) and the Responses API (whole
 * and its typed event stream).
 *
 * @module
 */
import {
  argsText,
  CREATED,
  type Item,
  modelOf,
  pieces,
  type RenderContext,
  type UpstreamAnswer,
  usageOf,
} from "./_upstream_answer.ts";

function chatUsage(a: UpstreamAnswer): Record<string, unknown> {
  const u = usageOf(a);
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    total_tokens: u.input_tokens + u.output_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens },
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens },
  };
}

function chatCallId(a: UpstreamAnswer, n: number, i: number): string {
  return a.toolCalls?.[i].id ?? `call_${n}_${i}`;
}

function chatFinish(a: UpstreamAnswer): string {
  return a.stopReason ?? (a.toolCalls?.length ? "tool_calls" : "stop");
}

/** A whole chat completion (JSON text). */
export function chatWhole(a: UpstreamAnswer, ctx: RenderContext): string {
  const calls = a.toolCalls?.map((c, i) => ({
    id: chatCallId(a, ctx.n, i),
    type: "function",
    function: { name: c.name, arguments: argsText(c) },
  }));
  return JSON.stringify({
    id: `chatcmpl-up${ctx.n}`,
    object: "chat.completion",
    created: CREATED,
    model: modelOf(a, ctx),
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: a.text ?? null,
        refusal: null,
        ...(calls?.length ? { tool_calls: calls } : {}),
      },
      logprobs: null,
      finish_reason: chatFinish(a),
    }],
    usage: chatUsage(a),
    system_fingerprint: "fp_up",
  });
}

/** A chat completion as SSE chunks, ending with `[DONE]`. */
export function chatChunks(a: UpstreamAnswer, ctx: RenderContext): string[] {
  const size = a.chunkSize ?? 8;
  const opts = ctx.request?.stream_options as Record<string, unknown> | null;
  const withUsage = opts?.include_usage === true;
  const head = {
    id: `chatcmpl-up${ctx.n}`,
    object: "chat.completion.chunk",
    created: CREATED,
    model: modelOf(a, ctx),
    system_fingerprint: "fp_up",
  };
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${
      JSON.stringify({
        ...head,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(withUsage ? { usage: null } : {}),
      })
    }\n\n`;
  const out = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const p of pieces(a.text ?? "", size)) out.push(chunk({ content: p }));
  (a.toolCalls ?? []).forEach((c, i) => {
    out.push(chunk({
      tool_calls: [{
        index: i,
        id: chatCallId(a, ctx.n, i),
        type: "function",
        function: { name: c.name, arguments: "" },
      }],
    }));
    for (const p of pieces(argsText(c), size)) {
      out.push(
        chunk({ tool_calls: [{ index: i, function: { arguments: p } }] }),
      );
    }
  });
  out.push(chunk({}, chatFinish(a)));
  if (withUsage) {
    out.push(
      `data: ${
        JSON.stringify({ ...head, choices: [], usage: chatUsage(a) })
      }\n\n`,
    );
  }
  out.push("data: [DONE]\n\n");
  return out;
}

function responseItems(a: UpstreamAnswer, n: number): Item[] {
  const items: Item[] = [];
  if (a.text !== undefined) {
    items.push({
      id: `msg_up${n}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{
        type: "output_text",
        annotations: [],
        logprobs: [],
        text: a.text,
      }],
    });
  }
  (a.toolCalls ?? []).forEach((c, i) =>
    items.push({
      id: `fc_up${n}_${i}`,
      type: "function_call",
      status: "completed",
      arguments: argsText(c),
      call_id: c.id ?? `call_${n}_${i}`,
      name: c.name,
    })
  );
  return items;
}

/** A response object (done, or as `response.created` shows it). */
export function responseObject(
  a: UpstreamAnswer,
  ctx: RenderContext,
  done = true,
): Item {
  const u = usageOf(a);
  const req = ctx.request ?? {};
  return {
    id: `resp_up${ctx.n}`,
    object: "response",
    created_at: CREATED,
    status: done ? (a.stopReason ?? "completed") : "in_progress",
    background: false,
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    model: modelOf(a, ctx),
    output: done ? responseItems(a, ctx.n) : [],
    parallel_tool_calls: true,
    previous_response_id: req.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: true,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: req.tools ?? [],
    top_p: 1,
    truncation: "disabled",
    usage: done
      ? {
        input_tokens: u.input_tokens,
        input_tokens_details: { cached_tokens: u.cached_tokens },
        output_tokens: u.output_tokens,
        output_tokens_details: { reasoning_tokens: u.reasoning_tokens },
        total_tokens: u.input_tokens + u.output_tokens,
      }
      : null,
    user: null,
    metadata: {},
  };
}

/** A response as its typed SSE events. */
export function responsesEvents(
  a: UpstreamAnswer,
  ctx: RenderContext,
): string[] {
  const size = a.chunkSize ?? 8;
  const out: string[] = [];
  const emit = (type: string, fields: Item) =>
    out.push(
      `event: ${type}\ndata: ${
        JSON.stringify({ type, sequence_number: out.length, ...fields })
      }\n\n`,
    );
  const pending = responseObject(a, ctx, false);
  emit("response.created", { response: pending });
  emit("response.in_progress", { response: pending });
  responseItems(a, ctx.n).forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "message") {
      const text = (item.content as { text: string }[])[0].text;
      const part = { type: "output_text", annotations: [], logprobs: [] };
      emit("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      const at = { item_id, output_index, content_index: 0 };
      emit("response.content_part.added", {
        ...at,
        part: { ...part, text: "" },
      });
      for (const delta of pieces(text, size)) {
        emit("response.output_text.delta", { ...at, delta, logprobs: [] });
      }
      emit("response.output_text.done", { ...at, text, logprobs: [] });
      emit("response.content_part.done", { ...at, part: { ...part, text } });
    } else {
      const args = item.arguments as string;
      emit("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of pieces(args, size)) {
        emit("response.function_call_arguments.delta", {
          item_id,
          output_index,
          delta,
        });
      }
      emit("response.function_call_arguments.done", {
        item_id,
        output_index,
        name: item.name,
        arguments: args,
      });
    }
    emit("response.output_item.done", { output_index, item });
  });
  emit("response.completed", { response: responseObject(a, ctx) });
  return out;
}
