import { assertEquals, assertOk } from "../_assert.ts";
import { findAllSources, findSource } from "../../lib/lineage/find_source.ts";
import { isMeaningful, tokenize } from "../../lib/lineage/meaningful.ts";
import { parsePath, resolvePath } from "../../lib/lineage/paths.ts";
import { StateIndex } from "../../lib/lineage/state_index.ts";

function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const POOL = [
  "U-1",
  "U-2",
  "O-77",
  "x y",
  "ok",
  1234,
  5,
  3.5,
  true,
  null,
  "a-b_c",
  "we ird",
];

function randomValue(r: () => number, depth: number): unknown {
  const roll = r();
  if (depth <= 0 || roll < 0.4) return POOL[Math.floor(r() * POOL.length)];
  if (roll < 0.7) {
    return Array.from(
      { length: Math.floor(r() * 4) },
      () => randomValue(r, depth - 1),
    );
  }
  if (roll < 0.8) return JSON.stringify(randomValue(r, depth - 1)); // JSON in text
  if (roll < 0.85) return `id ${POOL[Math.floor(r() * 3)]} done`; // tokens in text
  const obj: Record<string, unknown> = {};
  for (let i = 0; i < Math.floor(r() * 4); i++) {
    obj[["id", "user", "orders", "my key", "n"][Math.floor(r() * 5)]] =
      randomValue(r, depth - 1);
  }
  return obj;
}

Deno.test("findAllSources(): every returned path resolves to an equal value, best first (property, 500 random states)", () => {
  const r = rng(7);
  let checked = 0;
  for (let round = 0; round < 500; round++) {
    const state: Record<string, unknown> = {
      r0: randomValue(r, 5),
      r1: randomValue(r, 5),
      sel: Math.floor(r() * 3),
    };
    for (const target of POOL) {
      const paths = findAllSources(target, state);
      for (const p of paths) {
        assertEquals(
          resolvePath(state, p),
          target,
          `${p} in ${JSON.stringify(state)}`,
        );
        checked++;
      }
      // Ordering: symbolic-index paths first, then shorter.
      for (let i = 1; i < paths.length; i++) {
        const a = paths[i - 1], b = paths[i];
        const sa = a.includes("[$") ? 0 : 1, sb = b.includes("[$") ? 0 : 1;
        const ta = /~(token|word)\[/.test(a) ? 1 : 0,
          tb = /~(token|word)\[/.test(b) ? 1 : 0;
        assertOk(
          sa < sb ||
            (sa === sb && (ta < tb || (ta === tb && a.length <= b.length))),
          `${a} before ${b}`,
        );
      }
      assertEquals(findSource(target, state), paths[0] ?? null);
    }
  }
  assertOk(checked > 1000, `only ${checked} paths checked`);
});

Deno.test("findSource() prefers a symbolic index path when an index equals a state variable", () => {
  const state = {
    selected_index: 1,
    list_orders_0: { orders: [{ id: "O-1" }, { id: "O-2" }] },
  };
  assertEquals(
    findSource("O-2", state),
    "list_orders_0.orders[$selected_index].id",
  );
  assertEquals(findAllSources("O-2", state), [
    "list_orders_0.orders[$selected_index].id",
    "list_orders_0.orders[1].id",
  ]);
});

Deno.test("findSource() sees inside JSON text, structured MCP content and text tokens; exact equality only", () => {
  const state = {
    read_0: { content: '{"owner": "U-981", "total": 4250}' },
    mcp_1: [{ type: "text", text: '{"temperature":36,"station":"ST-4411"}' }],
    sh_2: { stdout: "pending: INV-2210\ndone: INV-2209\n" },
  };
  assertEquals(findSource("U-981", state), "read_0.content~json.owner");
  assertEquals(findSource(4250, state), "read_0.content~json.total");
  assertEquals(findSource("ST-4411", state), "mcp_1[0].text~json.station");
  assertEquals(findSource("INV-2210", state), "sh_2.stdout~word[1]");
  assertEquals(findSource("INV-22", state), null); // never part of a longer token
  assertEquals(findSource("U-98", state), null);
});

Deno.test("StateIndex.lookup() agrees with findAllSources() on primitive values", () => {
  const r = rng(11);
  for (let round = 0; round < 100; round++) {
    const idx = new StateIndex();
    const state: Record<string, unknown> = {};
    for (const k of ["a_0", "b_1"]) {
      const v = randomValue(r, 4);
      idx.add(k, v);
      state[k] = v;
    }
    for (
      const target of POOL.filter((x) =>
        typeof x === "string" || typeof x === "number"
      )
    ) {
      assertEquals(
        idx.lookup(target),
        findAllSources(target, state),
        String(target),
      );
    }
  }
});

Deno.test("isMeaningful() keeps identifiers and drops booleans, small integers and prose", () => {
  for (
    const v of ["U-1042", "ana@example.com", "/tmp/a.txt", 7781, 42.5, "ab"]
  ) {
    assertEquals(isMeaningful(v), true, String(v));
  }
  for (
    const v of [
      true,
      false,
      null,
      0,
      3,
      999,
      -5,
      "a",
      "",
      "two words",
      undefined,
    ]
  ) {
    assertEquals(isMeaningful(v), false, String(v));
  }
  assertEquals(tokenize('grep "^U-981," users.csv').map((t) => t.text), [
    "grep",
    "U-981",
    "users",
    "csv",
  ]);
  assertEquals(parsePath('a["my key"][2].b~json.c~token[1]').length, 7);
});
