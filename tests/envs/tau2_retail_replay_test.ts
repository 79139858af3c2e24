/**
 * The τ² retail environment: replay of the vendored conversations, the
 * answers and messages for reads and bad calls, τ²'s DB rule and the
 * capabilities module.
 *
 * @module
 */
import {
  assertEquals,
  assertNotEquals,
  assertOk,
  assertThrows,
} from "../_assert.ts";
import {
  replayCheck,
  RETAIL_TOOL_SCHEMAS,
  RetailEnv,
  RetailToolError,
  taskSolved,
} from "../../eval/envs/tau2/mod.ts";
import { createCapabilities } from "../../examples/tau2/retail_capabilities.ts";
import {
  dbText,
  freshDb,
  match,
  refused,
  slice,
  slicePath,
} from "./_retail.ts";

Deno.test("replayCheck() reproduces the vendored slice's tool results and solves its tasks", () => {
  const r = replayCheck(slice, { match, db: freshDb() });
  assertEquals(r.episodes, 27);
  assertOk(r.calls >= 200, `only ${r.calls} calls`);
  assertOk(
    r.reproduced_calls / r.calls >= 0.95,
    `${r.reproduced_calls}/${r.calls}: ${JSON.stringify(r.mismatches[0])}`,
  );
  assertEquals(r.mismatches.length, r.calls - r.reproduced_calls);
  // Simulation 3 is matched to task 12, but its customer's task 14 is the
  // one it ran (τ² gave it reward 1): the match file's known ambiguity.
  assertEquals(r.unsolved.map((u) => u.simulation), [3]);
  assertEquals(r.solved, r.episodes - 1);
});

Deno.test("RetailEnv.content() writes results exactly as τ² recorded them", () => {
  const env = new RetailEnv(freshDb());
  const msgs = slice.simulations[0].messages;
  assertEquals(
    env.content(env.tools.get_user_details({ user_id: "raj_santos_9079" })),
    msgs[7].content,
  );
  assertEquals(
    env.content(env.tools.list_all_product_types({})),
    msgs[9].content,
  );
  assertEquals(
    env.content(new RetailToolError("User not found")),
    "Error: User not found",
  );
});

Deno.test("RetailEnv tools give τ²'s answers and messages for reads and bad calls", () => {
  const env = new RetailEnv(freshDb());
  assertEquals(
    env.tools.find_user_id_by_email({ email: "RAJ.SANTOS4322@example.com" }),
    "raj_santos_9079",
  );
  refused(
    () =>
      env.tools.find_user_id_by_name_zip({
        first_name: "Raj",
        last_name: "Santos",
        zip: "00000",
      }),
    "User not found",
  );
  refused(
    () => env.tools.get_item_details({ item_id: "0000000000" }),
    "Item not found",
  );
  assertEquals(
    (env.tools.get_item_details({ item_id: "6974536207" }) as { price: number })
      .price,
    49.3,
  );
  refused(
    () => env.tools.get_product_details({ product_id: "6974536207" }),
    "Product not found",
  );
  assertEquals(
    env.tools.calculate({ expression: "3131.1 + 4777.75 + 367.38" }),
    "8276.23",
  );
  assertEquals(env.tools.calculate({ expression: "(2 + 2) * 3" }), "12.0");
  refused(
    () => env.tools.calculate({ expression: "2 + x" }),
    "Invalid characters in expression",
  );
  refused(
    () => env.tools.calculate({ expression: "1 / 0" }),
    "division by zero",
  );
  assertEquals(
    env.tools.transfer_to_human_agents({ summary: "help" }),
    "Transfer successful",
  );
  refused(
    () => env.tools.get_order_details({}),
    "RetailTools.get_order_details() missing 1 required positional argument: 'order_id'",
  );
  refused(
    () => env.tools.get_order_details({ order_id: "#W6289770", extra: 1 }),
    "RetailTools.get_order_details() got an unexpected keyword argument 'extra'",
  );
  assertEquals(
    env.respond("no_such_tool", {}),
    "Error: Tool 'no_such_tool' not found.",
  );
  assertEquals(
    RETAIL_TOOL_SCHEMAS.map((s) => s.name).sort(),
    Object.keys(env.tools).sort(),
  );
  const readOnly = RETAIL_TOOL_SCHEMAS.filter((s) => s.read_only).map((s) =>
    s.name
  );
  assertEquals(readOnly, [
    "calculate",
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_item_details",
    "get_order_details",
    "get_product_details",
    "get_user_details",
    "list_all_product_types",
  ]);
});

Deno.test("taskSolved() fails a run that made a wrong write and names the path", () => {
  const initial = freshDb();
  const actions = [{
    name: "cancel_pending_order",
    arguments: { order_id: "#W3614011", reason: "no longer needed" },
  }];
  const right = new RetailEnv(initial);
  right.tools.cancel_pending_order({
    order_id: "#W3614011",
    reason: "no longer needed",
  });
  assertEquals(taskSolved({ initialDb: initial, finalDb: right.db, actions }), {
    solved: true,
  });
  const wrong = new RetailEnv(initial);
  wrong.tools.cancel_pending_order({
    order_id: "#W3614011",
    reason: "ordered by mistake",
  });
  assertEquals(taskSolved({ initialDb: initial, finalDb: wrong.db, actions }), {
    solved: false,
    diff: '$.orders["#W3614011"].cancel_reason',
  });
  assertEquals(
    taskSolved({ initialDb: initial, finalDb: initial, actions }).solved,
    false,
  );
});

Deno.test("RetailEnv never mutates the database it was given", () => {
  const input = freshDb();
  const env = new RetailEnv(input);
  env.tools.cancel_pending_order({
    order_id: "#W3614011",
    reason: "no longer needed",
  });
  env.tools.modify_user_address({
    user_id: "lei_li_6575",
    address1: "a",
    address2: "b",
    city: "c",
    state: "d",
    country: "e",
    zip: "f",
  });
  taskSolved({
    initialDb: input,
    finalDb: env.db,
    actions: [{
      name: "modify_pending_order_payment",
      arguments: {
        order_id: "#W3414433",
        payment_method_id: "credit_card_4466831",
      },
    }],
  });
  assertEquals(JSON.stringify(input), JSON.stringify(JSON.parse(dbText)));
  assertNotEquals(
    env.db.orders["#W3614011"].status,
    input.orders["#W3614011"].status,
  );
});

Deno.test("createCapabilities() with --task judges the run by the DB rule", () => {
  const caps = createCapabilities({
    args: ["--task", "89", "--tasks", slicePath],
  });
  assertEquals(caps.schemas.length, RETAIL_TOOL_SCHEMAS.length);
  assertOk(caps.instructions.length > 0);
  const before = caps.outcome();
  assertEquals(before?.success, false);
  assertOk(before?.diff?.startsWith("$.orders"));
  for (const m of slice.simulations[0].messages) {
    for (const c of m.tool_calls ?? []) {
      const tool = caps.tools[c.name];
      assertEquals(tool.params, "object");
      try {
        tool.call(c.arguments);
      } catch (e) {
        assertOk(e instanceof RetailToolError);
      }
    }
  }
  assertEquals(caps.outcome(), { success: true });
  assertEquals(createCapabilities({ args: [] }).outcome(), null);
  assertThrows(
    () =>
      createCapabilities({ args: ["--task", "no-such", "--tasks", slicePath] }),
    /No task "no-such"/,
  );
});
