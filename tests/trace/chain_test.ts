import { assertEquals, assertNotEquals, assertThrows } from "../_assert.ts";
import { computeEventHash, HashChainer } from "../../lib/trace/chain.ts";
import { GENESIS_HASH, sha256Digest } from "../../lib/trace/hash.ts";
import {
  annotation,
  canonicalJson,
  toolCallStarted,
} from "../../lib/trace/mod.ts";
import { fixedContext } from "../_helpers.ts";

Deno.test("HashChainer.seal() numbers from 1 and links each event to the previous hash", () => {
  const ctx = fixedContext("cap_chain");
  const chainer = new HashChainer();
  const a = chainer.seal(annotation(ctx, { type: "note" })).event;
  const b = chainer.seal(
    toolCallStarted(ctx, {
      tool: { host_name: "Read", logical_id: null },
      arguments: { path: "x" },
    }),
  ).event;
  assertEquals([a.sequence, b.sequence], [1, 2]);
  assertEquals(a.prev_event_hash, GENESIS_HASH);
  assertEquals(b.prev_event_hash, a.event_hash);
  assertEquals(chainer.head, { sequence: 2, hash: b.event_hash });
});

Deno.test("event_hash is SHA-256 of the canonical event without event_hash", () => {
  const ctx = fixedContext("cap_chain");
  const { event, line } = new HashChainer().seal(
    annotation(ctx, { type: "note", z: [1, 2], a: "é" }),
  );
  const { event_hash, ...body } = event;
  assertEquals(event_hash, sha256Digest(canonicalJson(body)));
  assertEquals(computeEventHash(event), event_hash);
  // The spool line is the canonical JSON of the whole event.
  assertEquals(line, canonicalJson(event));
});

Deno.test("computeEventHash() changes when any covered field changes", () => {
  const ctx = fixedContext("cap_chain");
  const { event } = new HashChainer().seal(annotation(ctx, { type: "note" }));
  const variants = [
    { ...event, sequence: 2 },
    { ...event, prev_event_hash: sha256Digest("x") },
    { ...event, payload: { type: "other" } },
    { ...event, source: { ...event.source, model: "m" } },
    { ...event, actor: "user" },
  ];
  for (const v of variants) {
    assertNotEquals(computeEventHash(v), event.event_hash);
  }
});

Deno.test("HashChainer.commit() refuses an event that is not next", () => {
  const ctx = fixedContext("cap_chain");
  const chainer = new HashChainer();
  const first = chainer.prepare(annotation(ctx, { type: "a" }));
  chainer.commit(first);
  assertThrows(() => chainer.commit(first), RangeError);
  assertEquals(chainer.head.sequence, 1);
});
