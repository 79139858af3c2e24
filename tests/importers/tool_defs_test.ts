import { assertEquals, assertMatch, assertThrows } from "../_assert.ts";
import { HashChainer } from "../../lib/trace/chain.ts";
import type { ExposedTool } from "../../lib/trace/mod.ts";
import {
  convertTrajectories,
  ImportError,
} from "../../lib/importers/trajectories.ts";
import { resolveEffects } from "../../lib/compiler/effects.ts";
import type { Episode } from "../../lib/lineage/records.ts";

const V1 = new URL(
  "../../fixtures/tau_bench_v1_airline_slice.json",
  import.meta.url,
);
const now = () => new Date(0);

function sealed(
  converted: ReturnType<typeof convertTrajectories>,
): Episode[] {
  return converted.episodes.map((e) => {
    const chain = new HashChainer();
    return {
      capture_id: "imp",
      episode_id: e.episode_id,
      events: e.events.map((ev) => chain.seal(ev).event),
    };
  });
}

const conversation = [
  { role: "user", content: "Archive note n1 and tell me what it said" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "c1",
        type: "function",
        function: { name: "archive_note", arguments: '{"id":"n1"}' },
      },
      {
        id: "c2",
        type: "function",
        function: { name: "read_note", arguments: '{"id":"n1"}' },
      },
    ],
  },
  { role: "tool", tool_call_id: "c1", content: '{"archived":true}' },
  { role: "tool", tool_call_id: "c2", content: '{"text":"buy milk"}' },
  { role: "assistant", content: "Done: it said buy milk." },
];

Deno.test("convertTrajectories() records an openai-messages file's tool definitions as toolset.exposed, annotations included", () => {
  const file = JSON.stringify([{
    id: "t1",
    messages: conversation,
    tools: [
      {
        type: "function",
        function: {
          name: "archive_note",
          description: "Archive a note",
          parameters: { type: "object", properties: { id: {} } },
        },
        annotations: { readOnlyHint: false, destructiveHint: false },
      },
      {
        type: "function",
        function: { name: "read_note", parameters: { type: "object" } },
      },
    ],
  }]);
  const c = convertTrajectories(file, {
    format: "openai-messages",
    captureId: "imp",
    now,
  });
  const events = c.episodes[0].events;
  assertEquals(events[0].kind, "episode.started");
  assertEquals(events[1].kind, "toolset.exposed");
  assertEquals(events[1].payload.origin, "file");
  const tools = events[1].payload.tools as ExposedTool[];
  assertEquals(tools.map((t) => t.name), ["archive_note", "read_note"]);
  assertEquals(tools[0].description, "Archive a note");
  assertEquals(tools[0].annotations, {
    readOnlyHint: false,
    destructiveHint: false,
  });
  const r = resolveEffects(sealed(c));
  // The definition's annotation decides archive_note (a name nothing could guess).
  assertEquals(r.effects.archive_note, "write");
  assertEquals(r.source.archive_note, "schema");
  // A definition without hints leaves the name to decide.
  assertEquals(r.source.read_note, "inferred");

  const bad = JSON.stringify([{ messages: conversation, tools: [{}] }]);
  const err = assertThrows(
    () =>
      convertTrajectories(bad, {
        format: "openai-messages",
        captureId: "imp",
      }),
    ImportError,
  );
  assertMatch(err.message, /trajectory 0: tool definition 0 has no name/);
});

Deno.test("convertTrajectories() gives a τ² file the declared tool types of its domain and keeps its tool_defs", () => {
  const file = JSON.stringify({
    info: {
      environment_info: {
        domain_name: "airline",
        policy: "",
        tool_defs: {
          get_user_details: {
            name: "get_user_details",
            doc: "Get the details of a user",
            params: { type: "object", properties: { user_id: {} } },
            returns: null,
          },
          brand_new_tool: { name: "brand_new_tool", doc: "Not in the table" },
        },
      },
    },
    tasks: [],
    simulations: [{
      task_id: "3",
      messages: [
        { role: "user", content: "Cancel reservation ABC123" },
        {
          role: "assistant",
          tool_calls: [{
            id: "c1",
            name: "cancel_reservation",
            arguments: { reservation_id: "ABC123" },
          }],
        },
        { role: "tool", id: "c1", content: '{"status":"cancelled"}' },
      ],
      reward_info: { reward: 1 },
    }],
  });
  const c = convertTrajectories(file, {
    format: "tau2",
    captureId: "imp",
    now,
  });
  const exposed = c.episodes[0].events[1];
  assertEquals(exposed.kind, "toolset.exposed");
  assertEquals(exposed.payload.origin, "domain:tau2/airline");
  const tools = exposed.payload.tools as ExposedTool[];
  const user = tools.find((t) => t.name === "get_user_details")!;
  assertEquals(user.description, "Get the details of a user");
  assertEquals(user.input_schema, {
    type: "object",
    properties: { user_id: {} },
  });
  const r = resolveEffects(sealed(c));
  assertEquals(r.effects.cancel_reservation, "destructive");
  assertEquals(r.effects.get_user_details, "read");
  assertEquals(r.effects.transfer_to_human_agents, "write");
  assertEquals(r.source.cancel_reservation, "domain");
  // A defined tool the domain table does not type is left to lower levels.
  assertEquals(r.source.brand_new_tool, "unknown");
});

Deno.test("convertTrajectories() adds no toolset for τ-bench v1, which declares no tool types", () => {
  const c = convertTrajectories(Deno.readTextFileSync(V1), {
    format: "tau-bench",
    captureId: "imp",
    now,
  });
  assertEquals(
    c.episodes.flatMap((e) => e.events).filter((e) =>
      e.kind === "toolset.exposed"
    ).length,
    0,
  );
  const r = resolveEffects(sealed(c));
  assertEquals(r.source.get_reservation_details, "inferred");
  assertEquals(r.source.book_reservation, "unknown");
  assertEquals(r.unknown_calls.update_reservation_flights, 10);
});
