/**
 * `StreamKeep`: a relayed stream's answer, read for its record from pieces
 * whose buffers the relay reuses, a few events at a time: the answer is the
 * one the whole stream gives, what came so far can be asked for mid-stream,
 * and past its limit reading stops.
 *
 * @module
 */
import { equal, ok } from "node:assert/strict";
import { StreamKeep } from "../../lib/model_gateway/stream_keep.ts";
import { KeptBytes } from "../../lib/model_gateway/kept_bytes.ts";
import { openaiChatWireSpec } from "../../lib/model_gateway/wires/openai_chat/mod.ts";

const enc = new TextEncoder();
const reader = openaiChatWireSpec.reader({
  path: "/v1/chat/completions",
  recorded: true,
  stream: false,
  model: null,
  method: null,
});

/** A Chat Completions stream of `words` (one chunk each), then finish and `[DONE]`. */
function chatStream(words: string[]): string {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${
      JSON.stringify({
        id: "chatcmpl-keep",
        object: "chat.completion.chunk",
        model: "gpt-keep",
        choices: [{ index: 0, delta, finish_reason: finish }],
      })
    }\n\n`;
  return [
    chunk({ role: "assistant", content: "" }, null),
    ...words.map((w) => chunk({ content: w }, null)),
    chunk({}, "stop"),
    "data: [DONE]\n\n",
  ].join("");
}

/**
 * Push `text` in pieces of `size` bytes through one buffer that is
 * overwritten after each push, as the relay's reader reuses its buffer.
 */
function pushReused(keep: StreamKeep, text: string, size: number): void {
  const bytes = enc.encode(text);
  const buf = new Uint8Array(size);
  for (let at = 0; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, at + size);
    buf.set(piece);
    keep.push(buf.subarray(0, piece.length));
    buf.fill(0x7b); // the next read writes over it
  }
}

Deno.test("StreamKeep: the answer read from reused pieces is the whole stream's, split UTF-8 included", () => {
  const words = Array.from({ length: 300 }, (_, i) => `wörd ${i} ✓ `);
  for (const size of [1, 7, 300, 16 * 1024]) {
    const keep = new StreamKeep(reader, new KeptBytes(1 << 30), 1 << 30);
    pushReused(keep, chatStream(words), size);
    keep.end();
    ok(keep.complete, `complete, pieces of ${size}`);
    const res = keep.acc.result();
    equal(res.text, words.join(""), `pieces of ${size}`);
    equal(res.stop_reason, "stop");
  }
});

Deno.test("StreamKeep: mid-stream, the answer so far holds every piece taken, the gathered ones too", () => {
  const keep = new StreamKeep(reader, new KeptBytes(1 << 30), 1 << 30);
  const all = chatStream(["one ", "two ", "three"]);
  const cut = all.indexOf("three");
  const head = all.slice(0, all.lastIndexOf("data:", cut));
  pushReused(keep, head, 64);
  equal(keep.acc.result().text, "one two ");
  equal(keep.complete, false);
  pushReused(keep, all.slice(head.length), 64);
  keep.end();
  equal(keep.acc.result().text, "one two three");
  equal(keep.complete, true);
});

Deno.test("StreamKeep: past its limit reading stops, the answer is not complete, and the budget gets no more", () => {
  const budget = new KeptBytes(1 << 30);
  const text = chatStream(Array.from({ length: 50 }, (_, i) => `w${i} `));
  const keep = new StreamKeep(reader, budget, 1000);
  pushReused(keep, text, 100);
  keep.end();
  ok(keep.stopped?.includes("1000 bytes"), String(keep.stopped));
  equal(keep.complete, false);
  equal(keep.taken, 1000);
  equal(budget.used, 1000);
});
