import { assertEquals, assertThrows } from "../_assert.ts";
import { canonicalJson } from "../../lib/trace/mod.ts";

Deno.test("canonicalJson() sorts keys at every depth and drops whitespace", () => {
  assertEquals(
    canonicalJson({ b: { z: 1, a: [2, { y: null, x: true }] }, a: "s" }),
    '{"a":"s","b":{"a":[2,{"x":true,"y":null}],"z":1}}',
  );
});

Deno.test("canonicalJson() sorts by UTF-16 code units, not locale", () => {
  assertEquals(
    canonicalJson({ "é": 1, "Z": 2, "a": 3, "\u{1F600}": 4, "\uFFFF": 5 }),
    '{"Z":2,"a":3,"é":1,"\u{1F600}":4,"\uFFFF":5}',
  );
});

Deno.test("canonicalJson() is stable under parse and re-serialize", () => {
  const value = {
    text: 'line\nbreak "quoted" \u2028 ü 中文',
    n: [0, -0, 1.5, 1e21, 123456789012, -3],
    nested: { list: [[], {}, [null]] },
  };
  const once = canonicalJson(value);
  assertEquals(canonicalJson(JSON.parse(once)), once);
  assertEquals(once.includes(" "), true); // spaces inside strings stay
  assertEquals(/\n/.test(once), false); // newlines are escaped
});

Deno.test("canonicalJson() omits undefined properties and rejects what JSON cannot hold", () => {
  assertEquals(canonicalJson({ a: undefined, b: 1 }), '{"b":1}');
  assertThrows(() => canonicalJson({ a: NaN }), TypeError);
  assertThrows(() => canonicalJson({ a: Infinity }), TypeError);
  assertThrows(() => canonicalJson([undefined]), TypeError);
  assertThrows(() => canonicalJson({ a: 1n }), TypeError);
  assertThrows(() => canonicalJson({ f: () => 1 }), /at \$\.f/);
});

Deno.test("canonicalJson() sorts keys that look like array indexes by code units too, and writes what toJSON gives", () => {
  // An object lists index-like keys first, in numeric order: not canonical.
  assertEquals(
    canonicalJson({ b: 1, "10": 2, "2": 3, a: { "1": true, "0": [] } }),
    '{"10":2,"2":3,"a":{"0":[],"1":true},"b":1}',
  );
  assertEquals(
    canonicalJson({ z: { b: 1, a: undefined }, d: new Date(0) }),
    '{"d":"1970-01-01T00:00:00.000Z","z":{"b":1}}',
  );
});
