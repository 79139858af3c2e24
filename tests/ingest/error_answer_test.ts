/**
 * The one error model: errors carry their status, headers and code
 * (`HttpError`, or mapped once by `httpErrorOf`), and `errorAnswer` alone
 * chooses the body's shape by the route's family, the model gateway's own
 * errors included.
 */
import { assertEquals } from "../_assert.ts";
import {
  errorAnswer,
  errorHeaders,
  httpErrorOf,
  statusOf,
} from "../../lib/ingest/error_answer.ts";
import {
  MethodNotAllowedError,
  RouteNotFoundError,
  ServerBusyError,
  UnauthorizedError,
} from "../../lib/ingest/refusals.ts";
import { PayloadTooLargeError } from "../../lib/ingest/payload_too_large.ts";
import { HttpError } from "../../lib/model_gateway/http_error.ts";
import { GatewayError } from "../../lib/model_gateway/gateway_error.ts";
import { WIRE_SPECS } from "../../lib/model_gateway/wires/registry.ts";
import { StoreFullError } from "../../lib/store/store_full.ts";
import { SpoolError } from "../../lib/store/spool.ts";

Deno.test("the server's refusals are HttpErrors that carry their status, headers and code", () => {
  const cases: [HttpError, number, string, Record<string, string>][] = [
    [new RouteNotFoundError("/nope"), 404, "route_not_found", {}],
    [
      new MethodNotAllowedError({
        method: "PUT",
        path: "/ingest",
        allow: ["POST"],
      }),
      405,
      "method_not_allowed",
      { allow: "POST" },
    ],
    [new UnauthorizedError("token"), 401, "unauthorized", {
      "www-authenticate": "Bearer",
    }],
    [new ServerBusyError(3), 503, "server_busy", { "retry-after": "3" }],
    [new PayloadTooLargeError(10), 413, "payload_too_large", {}],
  ];
  for (const [err, status, code, headers] of cases) {
    assertEquals(err instanceof HttpError, true, err.name);
    assertEquals([err.status, err.code, err.headers], [status, code, headers]);
    assertEquals(httpErrorOf(err), err);
    assertEquals(errorHeaders(err), headers);
  }
});

Deno.test("httpErrorOf maps the other rooms' typed errors once; anything else is 500", () => {
  const spool = new SpoolError("/tmp/x.jsonl", 0, "damaged line");
  // A damaged spool is the store's failure, though SpoolError is a SyntaxError.
  assertEquals(spool instanceof SyntaxError, true);
  assertEquals(
    [
      statusOf(spool),
      statusOf(new SyntaxError("x")),
      statusOf(new URIError("x")),
      statusOf(new Error("x")),
      statusOf("a string"),
    ],
    [500, 400, 400, 500, 500],
  );
  assertEquals(httpErrorOf(new Error("boom")).code, "internal_error");
  assertEquals(httpErrorOf(new SyntaxError("x")).message, "x");
  const full = new StoreFullError(
    { root: "/tmp/store", part: "spool" },
    new Error("No space left on device"),
  );
  assertEquals([statusOf(full), httpErrorOf(full).code], [507, "store_full"]);
});

Deno.test("errorAnswer: a hook's failure once read is HTTP 200 {ok: false}; the listener's refusals keep their status", () => {
  const read = errorAnswer(new SyntaxError("not JSON"), { family: "hook" });
  assertEquals([read.status, read.body], [
    200,
    '{"ok":false,"error":"not JSON"}',
  ]);
  const busy = errorAnswer(new ServerBusyError(), { family: "hook" });
  assertEquals([busy.status, busy.headers["retry-after"]], [503, "1"]);
});

Deno.test("errorAnswer: a GatewayError is the API's own error, in the API the gateway read, with its headers after the shape's", () => {
  for (const spec of WIRE_SPECS) {
    const err = new GatewayError(spec, "upstream_timeout", "too slow");
    err.headers["x-harness-episode"] = "ep_1";
    // The route's shape names another API: the gateway's reading wins.
    const other = WIRE_SPECS.find((s) => s !== spec)!;
    const a = errorAnswer(err, { family: "model", api: other });
    const own = spec.error(504, "too slow");
    assertEquals(a.status, 504);
    assertEquals(a.body, own.body);
    assertEquals(Object.entries(a.headers), [
      ...Object.entries(own.headers),
      ["x-harness-episode", "ep_1"],
    ]);
  }
});

Deno.test("GatewayError: each code has its status", () => {
  const spec = WIRE_SPECS[0];
  const codes = [
    ["path_outside_api", 400],
    ["package_not_found", 404],
    ["body_too_large", 413],
    ["client_gone", 502],
    ["upstream_unreachable", 502],
    ["answer_unchecked", 502],
    ["gateway_full", 503],
    ["upstream_timeout", 504],
  ] as const;
  assertEquals(
    codes.map(([c]) => new GatewayError(spec, c, "m").status),
    codes.map(([, s]) => s),
  );
});
