/**
 * The checks every request passes before its route answers: no web page
 * (Origin), the server's own Host, the server's token as its route takes
 * it, and a body its route reads. Each refusal is a typed error
 * (`refusals.ts`); `errorAnswer` (`error_answer.ts`) answers it.
 *
 * @module
 */
import type { IngestRequest } from "./http1/mod.ts";
import type { IngestHandlerOptions } from "./handler_types.ts";
import type { Route } from "./route_table.ts";
import { isJsonType } from "./_handler_helpers.ts";
import { sameSecret } from "./secret.ts";
import {
  ForbiddenRequestError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from "./refusals.ts";

/**
 * Refuse a request that may not reach its route.
 *
 * @param req The request.
 * @param against `route`: its route (null when none has its path: the token
 *   is then asked as a bearer token, before the 404); `options`: the
 *   handler's options (`hostAllowed`, `token`, `adminKey`).
 * @throws {ForbiddenRequestError} For an Origin header or a foreign Host.
 * @throws {UnauthorizedError} For a missing or wrong token.
 * @throws {UnsupportedMediaTypeError} For a `POST` body its route does not read.
 */
export function checkRequest(
  req: IngestRequest,
  { route, options }: { route: Route | null; options: IngestHandlerOptions },
): void {
  // A web page can reach a loopback server; nothing of ours sends Origin.
  if (req.header("origin") !== null) {
    throw new ForbiddenRequestError(
      "Requests from web pages are refused (they carry an Origin header); hooks, forwarders and the CLI send none",
    );
  }
  const hostHeader = req.header("host") ?? "";
  if (options.hostAllowed && !options.hostAllowed(hostHeader)) {
    throw new ForbiddenRequestError(
      `Host ${
        JSON.stringify(hostHeader)
      } is not this server's loopback address`,
    );
  }
  if (options.token) checkToken(req, route, options);
  if (req.method === "POST" && route) checkBody(req, route);
}

function checkToken(
  req: IngestRequest,
  route: Route | null,
  options: IngestHandlerOptions,
): void {
  const token = options.token ?? "";
  const adminKey = options.adminKey;
  const auth = route?.auth ?? "bearer";
  // The pid file's admin key (owner-readable only) is enough to stop it.
  if (
    auth === "admin" && !!adminKey &&
    sameSecret(req.header("x-harness-admin-key") ?? "", adminKey)
  ) return;
  // The model API routes carry the client's own key in Authorization:
  // the server's token comes in x-harness-token there.
  if (auth === "model") {
    if (sameSecret(req.header("x-harness-token") ?? "", token)) return;
    throw new UnauthorizedError(
      "Missing or wrong ingest token: send x-harness-token: $HARNESS_INGEST_TOKEN beside your API key",
    );
  }
  if (sameSecret(req.header("authorization") ?? "", `Bearer ${token}`)) return;
  throw new UnauthorizedError(
    "Missing or wrong bearer token: send Authorization: Bearer $HARNESS_INGEST_TOKEN",
  );
}

function checkBody(req: IngestRequest, route: Route): void {
  if (route.body === "any") return;
  const type = req.header("content-type");
  if (isJsonType(type)) return;
  if (route.body === "json") {
    throw new UnsupportedMediaTypeError(
      "Send events with Content-Type: application/json",
    );
  }
  const bare = (type ?? "").split(";")[0].trim().toLowerCase();
  if (bare !== "application/x-protobuf") {
    throw new UnsupportedMediaTypeError(
      "Send OTLP traces with Content-Type: application/x-protobuf or application/json",
    );
  }
}
