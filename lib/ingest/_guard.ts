/**
 * The checks every request passes before its route: no web page (Origin),
 * the server's own Host, JSON (or OTLP protobuf) bodies on the write
 * routes, and the bearer token when the server has one.
 *
 * @module
 */
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import type { IngestHandlerOptions } from "./handler_types.ts";
import { json } from "./errors.ts";
import { isJsonType } from "./_handler_helpers.ts";
import { sameSecret } from "./secret.ts";

/**
 * The answer refusing a request, or null when it may go on to its route.
 *
 * @param req The request (its body is dropped when refused).
 * @param path Its path, without the query.
 * @param options The handler's options (`hostAllowed`, `token`, `adminKey`).
 * @returns 401, 403 or 415, or null.
 */
export async function refusal(
  req: IngestRequest,
  path: string,
  options: IngestHandlerOptions,
): Promise<IngestAnswer | null> {
  // A web page can reach a loopback server; nothing of ours sends Origin.
  if (req.header("origin") !== null) {
    await req.discard();
    return json(403, {
      ok: false,
      error:
        "Requests from web pages are refused (they carry an Origin header); hooks, forwarders and the CLI send none",
    });
  }
  const hostHeader = req.header("host") ?? "";
  if (options.hostAllowed && !options.hostAllowed(hostHeader)) {
    await req.discard();
    return json(403, {
      ok: false,
      error: `Host ${
        JSON.stringify(hostHeader)
      } is not this server's loopback address`,
    });
  }
  if (
    req.method === "POST" &&
    (path === "/ingest" || path.startsWith("/hook/")) &&
    !isJsonType(req.header("content-type"))
  ) {
    await req.discard();
    return json(415, {
      ok: false,
      error: "Send events with Content-Type: application/json",
    });
  }
  if (
    req.method === "POST" && path === "/v1/traces" &&
    !isJsonType(req.header("content-type")) &&
    (req.header("content-type") ?? "").split(";")[0].trim()
        .toLowerCase() !== "application/x-protobuf"
  ) {
    await req.discard();
    return json(415, {
      ok: false,
      error:
        "Send OTLP traces with Content-Type: application/x-protobuf or application/json",
    });
  }
  if (options.token) {
    const auth = req.header("authorization") ?? "";
    // The pid file's admin key (owner-readable only) is enough to stop it.
    const admin = path === "/admin/shutdown" && !!options.adminKey &&
      sameSecret(
        req.header("x-harness-admin-key") ?? "",
        options.adminKey,
      );
    // The model API routes carry the client's own key in Authorization:
    // the server's token comes in x-harness-token there.
    const model = path.startsWith("/v1/") && path !== "/v1/traces";
    const ok = model
      ? sameSecret(req.header("x-harness-token") ?? "", options.token)
      : sameSecret(auth, `Bearer ${options.token}`);
    if (!admin && !ok) {
      await req.discard();
      return json(401, {
        ok: false,
        error: model
          ? "Missing or wrong ingest token: send x-harness-token: $HARNESS_INGEST_TOKEN beside your API key"
          : "Missing or wrong bearer token: send Authorization: Bearer $HARNESS_INGEST_TOKEN",
      }, { "www-authenticate": "Bearer" });
    }
  }
  return null;
}
