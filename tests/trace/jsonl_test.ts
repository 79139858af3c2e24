import { assertEquals } from "../_assert.ts";
import { HashChainer } from "../../lib/trace/chain.ts";
import { verifyChain } from "../../lib/trace/jsonl.ts";
import { splitLines } from "../../lib/trace/lines.ts";
import { annotation, toolCallCompleted } from "../../lib/trace/mod.ts";
import { fixedContext } from "../_helpers.ts";

const enc = new TextEncoder();

function spool(n: number, captureId = "cap_v"): string[] {
  const ctx = fixedContext(captureId);
  const chainer = new HashChainer();
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const ev = i % 2
      ? annotation(ctx, { type: "note", i, text: `ü${i}` })
      : toolCallCompleted(ctx, {
        tool: { host_name: "get", logical_id: "get" },
        arguments: { id: `A-${i}` },
        // A nested object that mimics envelope keys must not confuse the check.
        result: { sequence: 999, prev_event_hash: "sha256:" + "f".repeat(64) },
      });
    lines.push(chainer.seal(ev).line);
  }
  return lines;
}

function chunks(text: string, size: number): Uint8Array[] {
  const bytes = enc.encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    out.push(bytes.slice(i, i + size));
  }
  return out;
}

Deno.test("verifyChain() accepts an intact spool in any chunking", async () => {
  const text = spool(25).join("\n") + "\n";
  for (const size of [1, 7, 64, 100_000]) {
    const r = await verifyChain(chunks(text, size), { captureId: "cap_v" });
    assertEquals(r.ok, true);
    assertEquals(r.events, 25);
    assertEquals(r.bytes, enc.encode(text).length);
    assertEquals(r.problem, null);
  }
});

Deno.test("verifyChain() finds a one-byte change on any line at that line's sequence", async () => {
  const lines = spool(12);
  for (let target = 0; target < lines.length; target++) {
    for (
      const pos of [
        1,
        20,
        Math.floor(lines[target].length / 2),
        lines[target].length - 3,
      ]
    ) {
      const bytes = enc.encode(lines[target]);
      // Flip one byte to another printable character.
      bytes[pos] = bytes[pos] === 0x41 ? 0x42 : 0x41;
      const tampered = [...lines];
      tampered[target] = new TextDecoder().decode(bytes);
      const r = await verifyChain([enc.encode(tampered.join("\n") + "\n")]);
      assertEquals(r.ok, false, `line ${target} byte ${pos}`);
      assertEquals(
        r.problem?.sequence,
        target + 1,
        `line ${target} byte ${pos}`,
      );
      assertEquals(r.problem?.line, target + 1);
      assertEquals(r.events, target);
    }
  }
});

Deno.test("verifyChain() reports a dropped line as a sequence break", async () => {
  const lines = spool(6);
  lines.splice(3, 1);
  const r = await verifyChain([enc.encode(lines.join("\n") + "\n")]);
  assertEquals(r.problem?.kind, "sequence");
  assertEquals(r.problem?.sequence, 4);
});

Deno.test("verifyChain() reports a line re-sealed out of chain as a broken link", async () => {
  const good = spool(5);
  // A valid line sealed against a different history.
  const forged =
    new HashChainer({ sequence: 2, hash: "sha256:" + "1".repeat(64) })
      .seal(annotation(fixedContext("cap_v"), { type: "forged" })).line;
  const lines = [...good.slice(0, 2), forged, ...good.slice(3)];
  const r = await verifyChain([enc.encode(lines.join("\n") + "\n")]);
  assertEquals(r.problem?.kind, "link");
  assertEquals(r.problem?.sequence, 3);
});

Deno.test("verifyChain() reports a torn tail, a foreign capture and garbage", async () => {
  const lines = spool(3);
  const torn = lines.join("\n") + "\n" + lines[0].slice(0, 10);
  assertEquals(
    (await verifyChain([enc.encode(torn)])).problem?.kind,
    "torn_tail",
  );
  const r = await verifyChain([enc.encode(lines.join("\n") + "\n")], {
    captureId: "other",
  });
  assertEquals(r.problem?.kind, "capture");
  const garbage = await verifyChain([enc.encode(lines[0] + "\n{not json\n")]);
  assertEquals(garbage.problem?.kind, "syntax");
  assertEquals(garbage.problem?.sequence, 2);
  assertEquals(garbage.problem?.byte_offset, enc.encode(lines[0]).length + 1);
});

Deno.test("verifyChain() on an empty spool is ok with the genesis head", async () => {
  const r = await verifyChain([]);
  assertEquals(r.ok, true);
  assertEquals(r.head_sequence, 0);
});

Deno.test("splitLines() gives byte offsets and flags an unterminated tail", async () => {
  const got = [];
  for await (const l of splitLines(chunks("ab\nc\n\ndé", 2))) {
    got.push([new TextDecoder().decode(l.bytes), l.offset, l.terminated]);
  }
  assertEquals(got, [["ab", 0, true], ["c", 3, true], ["", 5, true], [
    "dé",
    6,
    false,
  ]]);
});
