/**
 * The size rule of `blob_refs.ts` at its edges: lengths are those of the
 * canonical JSON (escapes counted, members JSON leaves out not), a value
 * exactly at the threshold stays inline, children go first and an object
 * still over the threshold is stored whole; sizes are UTF-8 bytes.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { externalizePayload, isBlobRef } from "../../lib/store/blob_refs.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import { sha256Digest } from "../../lib/trace/hash.ts";

function recorder(): { put: (t: string) => string; puts: string[] } {
  const puts: string[] = [];
  return {
    puts,
    put: (t) => {
      puts.push(t);
      return sha256Digest(t);
    },
  };
}

Deno.test("externalizePayload: a value at the threshold stays inline; one character more moves it out", () => {
  const at = { text: "a".repeat(100) }; // the string is 102 characters of JSON
  const r = recorder();
  assertEquals(
    externalizePayload(at, r.put, canonicalJson(at).length) === at,
    true,
  );
  assertEquals(externalizePayload(at, r.put, 102).text, at.text);
  assertEquals(r.puts, []);
  const moved = externalizePayload(at, r.put, 101);
  assertOk(isBlobRef(moved.text));
  assertEquals(r.puts, ["a".repeat(100)]);
});

Deno.test("externalizePayload: escapes count in a parent's length, a member JSON leaves out does not", () => {
  // 40 quotes are 80 characters of JSON: the list is over 60, each string
  // (42 characters as text + 2) is not moved on its own.
  const quoted = '"'.repeat(40);
  const payload = { list: [quoted, 1], gone: undefined, n: 2 };
  const r = recorder();
  const out = externalizePayload(payload, r.put, 60);
  // The list stays over 60 with nothing to move out: stored whole.
  assertOk(isBlobRef(out.list));
  assertEquals(r.puts, [canonicalJson([quoted, 1])]);
  assertEquals(out.n, 2);
  // Without the escapes it would fit: 42 + 2 + 1 + 2 = 47.
  const plain = { list: ["q".repeat(40), 1], gone: undefined };
  const r2 = recorder();
  assertEquals(externalizePayload(plain, r2.put, 60) === plain, true);
  assertEquals(r2.puts, []);
});

Deno.test("externalizePayload: children first; an object under the threshold with references stays an object; sizes are UTF-8 bytes", () => {
  const long = "é".repeat(300); // 600 bytes
  const payload = {
    result: { stdout: long, code: 0, lines: ["a", "b"] },
    other: { deep: { rows: Array.from({ length: 40 }, (_, i) => `row ${i}`) } },
  };
  const r = recorder();
  const out = externalizePayload(payload, r.put, 200);
  const result = out.result as Record<string, unknown>;
  assertOk(isBlobRef(result.stdout));
  assertEquals((result.stdout as { size: number }).size, 600);
  assertEquals((result.stdout as { encoding: string }).encoding, "text");
  assertEquals(result.code, 0);
  assertEquals(result.lines, ["a", "b"]);
  // `rows` (over 200, nothing in it to move) is stored whole as JSON; what
  // holds it then fits.
  const deep = (out.other as { deep: { rows: unknown } }).deep;
  assertOk(isBlobRef(deep.rows));
  assertEquals(
    (deep.rows as { $blob: string }).$blob,
    sha256Digest(canonicalJson(payload.other.deep.rows)),
  );
  assertEquals(r.puts.length, 2);
  // A lone surrogate is written as U+FFFD: three bytes.
  const odd = { s: "\ud800".repeat(100) };
  const out2 = externalizePayload(odd, recorder().put, 50);
  assertEquals((out2.s as { size: number }).size, 300);
});

Deno.test("externalizePayload: an object with toJSON is measured by what JSON writes for it", () => {
  // Each Date is 26 characters of JSON but has no members of its own.
  const payload = {
    a: { d: new Date(0), e: new Date(1), f: new Date(2), g: "x".repeat(30) },
  };
  const r = recorder();
  const out = externalizePayload(payload, r.put, 100);
  assertOk(isBlobRef(out.a));
  assertEquals(r.puts, [canonicalJson(payload.a)]);
});
