import { assertEquals } from "../_assert.ts";
import { jointVariants } from "../../lib/forms/agent/lookup_variants.ts";
import { AgentEngine } from "../../lib/forms/agent/agent_engine.ts";
import { generalLeaves } from "../../lib/forms/agent/call_leaves.ts";
import type { Binding } from "../../lib/forms/agent/binding_types.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";
import { agentIrWith } from "./_agent_ir.ts";
import { describeSource, type Source } from "../../lib/package/source.ts";

type LookupNode = Extract<IrNode, { kind: "lookup" }>;

function cover(sources: Source[]): Binding["lookup"] {
  return {
    sources,
    support: sources.map(() => 3),
    explained: 3,
    counterexamples: 0,
    mean_candidates: 1,
    deterministic: true,
    speculative: true,
  };
}

function binding(
  tool: string,
  path: string,
  lookup: Source[],
  choice: Source[] = lookup,
): Binding {
  return {
    tool,
    path,
    applicable: 3,
    variety: 3,
    episodes: [],
    lookup: cover(lookup),
    choice: cover(choice),
  };
}

const fromReservation = (field: string): Source => ({
  from: "result",
  tool: "get_reservation_details",
  path: ["flights", "[*]", field],
});

const reservation = (id: string, flights: [string, string][]) => ({
  reservation_id: id,
  user_id: "mia_li_3668",
  origin: "JFK",
  destination: "SEA",
  flight_type: "one_way",
  cabin: "economy",
  flights: flights.map(([flight_number, date]) => ({
    flight_number,
    date,
    origin: "JFK",
    destination: "SEA",
    price: 100,
  })),
  passengers: [],
  payment_history: [],
  created_at: "2024-05-01T10:00:00",
  total_baggages: 0,
  nonfree_baggages: 0,
  insurance: "no",
});

const status: LookupNode = {
  id: "lookup_get_flight_status",
  kind: "lookup",
  tool: "get_flight_status",
  args: [
    { path: "date", sources: [fromReservation("date")] },
    { path: "flight_number", sources: [fromReservation("flight_number")] },
  ],
};

Deno.test("jointVariants() takes arguments from one record: the first with one tool's source anchors, the others are `with` it", () => {
  const bindings = [
    binding("get_flight_status", "date", [fromReservation("date")]),
    binding("get_flight_status", "flight_number", [
      fromReservation("flight_number"),
    ]),
  ];
  const [v, ...more] = jointVariants(status, bindings);
  assertEquals(more, []);
  assertEquals(
    v.id,
    "lookup_get_flight_status_with_result_get_reservation_details",
  );
  assertEquals(v.args, [
    { path: "date", sources: [fromReservation("date")] },
    {
      path: "flight_number",
      sources: [{ ...fromReservation("flight_number"), with: "date" }],
    },
  ]);
  assertEquals(
    describeSource(v.args[1].sources![0]),
    "result of get_reservation_details at flights.[*].flight_number, from the same call and item as date",
  );
  // One argument, or no tool two arguments share: no variant.
  assertEquals(
    jointVariants({ ...status, args: status.args.slice(1) }, []),
    [],
  );
  assertEquals(
    jointVariants(status, [
      binding("get_flight_status", "date", [{ from: "user", shape: "9-9-9" }]),
      bindings[1],
    ]),
    [],
  );
});

Deno.test("a `with` source takes each flight's number with its own date, not every number with every date", () => {
  const [joint] = jointVariants(status, [
    binding("get_flight_status", "date", [fromReservation("date")]),
    binding("get_flight_status", "flight_number", [
      fromReservation("flight_number"),
    ]),
  ]);
  const read = (engine: AgentEngine) => {
    engine.user("My reservations, please.");
    for (
      const r of [
        reservation("ABC123", [["HAT001", "2024-05-10"], [
          "HAT002",
          "2024-05-11",
        ]]),
        reservation("XYZ789", [["HAT003", "2024-05-12"]]),
      ]
    ) {
      engine.record({
        tool: "get_reservation_details",
        args: { reservation_id: r.reservation_id },
        ok: true,
        result: JSON.stringify(r),
      }, "model");
    }
    return engine.dueLookups().map((c) => c.args);
  };
  assertEquals(read(new AgentEngine(agentIrWith(joint))), [
    { date: "2024-05-10", flight_number: "HAT001" },
    { date: "2024-05-11", flight_number: "HAT002" },
    { date: "2024-05-12", flight_number: "HAT003" },
  ]);
  assertEquals(
    read(new AgentEngine(agentIrWith(status))),
    [],
    "3 dates × 3 numbers pass the cap of 5",
  );
});

Deno.test("an argument source `with` another repeats one earlier call's arguments together", () => {
  const direct = (path: string): Source => ({
    from: "arg",
    tool: "search_direct_flight",
    path,
  });
  const node: LookupNode = {
    id: "lookup_search_onestop_flight",
    kind: "lookup",
    tool: "search_onestop_flight",
    args: ["date", "destination", "origin"].map((path) => ({
      path,
      sources: [direct(path)],
    })),
  };
  const [joint] = jointVariants(
    node,
    ["date", "destination", "origin"].map((p) =>
      binding("search_onestop_flight", p, [direct(p)])
    ),
  );
  const engine = new AgentEngine(agentIrWith(joint));
  engine.user("JFK to SEA on May 20, or SFO to ORD on May 21.");
  for (
    const args of [
      { origin: "JFK", destination: "SEA", date: "2024-05-20" },
      { origin: "SFO", destination: "ORD", date: "2024-05-21" },
    ]
  ) {
    engine.record(
      { tool: "search_direct_flight", args, ok: true, result: "[]" },
      "model",
    );
  }
  assertEquals(engine.dueLookups().map((c) => c.args), [
    { date: "2024-05-20", destination: "SEA", origin: "JFK" },
    { date: "2024-05-21", destination: "ORD", origin: "SFO" },
  ]);
  const plain = new AgentEngine(agentIrWith(node));
  plain.user("JFK to SEA on May 20, or SFO to ORD on May 21.");
  for (const c of engine.calls) plain.record(c, "model");
  assertEquals(plain.dueLookups(), [], "2 × 2 × 2 pass the cap of 5");
});

Deno.test("generalLeaves() keeps the keys of a wide record and generalizes keys that are data", () => {
  const paths = (v: unknown) =>
    new Set(generalLeaves(v).map((l) => l.path.join(".")));
  const record = paths(reservation("ABC123", [["HAT001", "2024-05-10"]]));
  assertEquals(record.has("origin"), true);
  assertEquals(record.has("flights.[*].date"), true);
  // Eleven product types by name, and ids: data, so any key.
  const types = Object.fromEntries(
    Array.from({ length: 11 }, (_, i) => [`Type ${i}`, `${i}`]),
  );
  assertEquals([...paths(types)], ["*"]);
  assertEquals([...paths({ variants: { "1008292230": { price: 1 } } })], [
    "variants.*.price",
  ]);
  // Each leaf knows its list items.
  const dated = generalLeaves({ flights: [{ date: "a" }, { date: "b" }] });
  assertEquals(dated.map((l) => l.items), [[{ list: "flights", index: 0 }], [{
    list: "flights",
    index: 1,
  }]]);
});

Deno.test("a lookup does not repeat a read made since the last write; after a write it may", () => {
  const engine = new AgentEngine(agentIrWith(status));
  engine.user("Is my flight on time?");
  engine.record({
    tool: "get_reservation_details",
    args: { reservation_id: "ABC123" },
    ok: true,
    result: reservation("ABC123", [["HAT001", "2024-05-10"]]),
  }, "model");
  const made = { date: "2024-05-10", flight_number: "HAT001" };
  engine.record(
    { tool: "get_flight_status", args: made, ok: true, result: "available" },
    "model",
  );
  assertEquals(engine.dueLookups(), []);
  engine.record(
    {
      tool: "cancel_reservation",
      args: { reservation_id: "ABC123" },
      ok: true,
      result: {},
    },
    "choice",
    { changesState: true },
  );
  assertEquals(engine.dueLookups().map((c) => c.args), [made]);
});
