import { assertEquals, assertOk } from "../_assert.ts";
import { callWithArgs } from "../../lib/runtime/bind_args.ts";
import {
  declareTool,
  readParameters,
  ToolBindingError,
} from "../../lib/tool_gateway/parameters.ts";

function refuses(f: () => unknown, pattern: RegExp) {
  let err: unknown = null;
  try {
    f();
  } catch (e) {
    err = e;
  }
  assertOk(err instanceof ToolBindingError, String(err));
  assertOk(pattern.test((err as Error).message), (err as Error).message);
}

Deno.test("parameters are read only when certain: plain, defaults with calls, methods; not destructured, rest or bound", () => {
  assertEquals(readParameters((a: number, b: number) => a + b), ["a", "b"]);
  assertEquals(
    readParameters((id: string, n = Math.max(1, 2), s = "x,y") => id + n + s),
    ["id", "n", "s"],
  );
  const obj = {
    cancel(order_id: string, reason: string) {
      return `${order_id}:${reason}`;
    },
    async find(email: string) {
      return await Promise.resolve(email);
    },
  };
  assertEquals(readParameters(obj.cancel), ["order_id", "reason"]);
  assertEquals(readParameters(obj.find), ["email"]);
  assertEquals(
    readParameters(function named(x: number) {
      return x;
    }),
    ["x"],
  );
  assertEquals(readParameters(({ id }: { id: string }) => id), null);
  assertEquals(readParameters((...xs: number[]) => xs.length), null);
  assertEquals(readParameters(obj.cancel.bind(obj)), null);
  assertEquals(readParameters(Math.max), null);
});

Deno.test("callWithArgs binds by name, falls back to one object, and never guesses silently", () => {
  const cancel = (order_id: string, reason: string) => `${order_id}:${reason}`;
  assertEquals(
    callWithArgs({
      name: "cancel",
      tool: cancel,
      args: { reason: "r", order_id: "O-1" },
    }),
    "O-1:r",
  );
  // A bound method cannot be read: declared, it binds by its names.
  const desk = {
    prefix: "#",
    get(order_id: string) {
      return this.prefix + order_id;
    },
  };
  assertEquals(
    callWithArgs({
      name: "get",
      tool: declareTool(desk.get.bind(desk), ["order_id"]),
      args: {
        order_id: "1",
      },
    }),
    "#1",
  );
  // One destructured parameter gets the arguments object.
  assertEquals(
    callWithArgs({
      name: "d",
      tool: ({ id, n }: { id: string; n: number }) => `${id}${n}`,
      args: {
        id: "a",
        n: 2,
      },
    }),
    "a2",
  );
  // Declared parameters win, in their order, under their names.
  const bound = declareTool(cancel.bind(null), ["order_id", "reason"]);
  assertEquals(
    callWithArgs({
      name: "c",
      tool: bound,
      args: { reason: "r", order_id: "O-2" },
    }),
    "O-2:r",
  );
  assertEquals(
    callWithArgs({
      name: "o",
      tool: declareTool((a: unknown) => a, "object"),
      args: { x: 1 },
    }),
    { x: 1 },
  );
  // A name that does not match is refused, not passed as an object.
  refuses(
    () =>
      callWithArgs({
        name: "get_order",
        tool: (id: string) => id,
        args: { order_id: "O-1" },
      }),
    /get_order: its parameters \(id\) do not name the arguments order_id; declare/,
  );
  refuses(
    () => callWithArgs({ name: "c", tool: bound, args: { order: "x" } }),
    /takes \(order_id, reason\), not order/,
  );
  refuses(
    () =>
      callWithArgs({
        name: "b",
        tool: cancel.bind(null),
        args: { order_id: "x", reason: "y" },
      }),
    /2 parameters cannot be read/,
  );
});
