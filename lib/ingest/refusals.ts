/**
 * The ingest server's refusals of a request as typed errors, each an
 * {@linkcode HttpError} that carries its status and headers: the route
 * table and the guards throw them, and `errorAnswer` (`error_answer.ts`)
 * alone turns them (and every other error) into an answer in the route's
 * body shape.
 *
 * @module
 */
import { HttpError } from "../model_gateway/http_error.ts";

/** No route has this path (404). */
export class RouteNotFoundError extends HttpError {
  /** The path asked for. */
  readonly path: string;
  /**
   * Create a `RouteNotFoundError`.
   *
   * @param path The path, without the query.
   */
  constructor(path: string) {
    super(404, `No route ${path}` + baseUrlHint(path), {
      code: "route_not_found",
    });
    this.name = "RouteNotFoundError";
    this.path = path;
  }
}

/**
 * A model API's path as an SDK appends it to a base URL that lacks `/v1`
 * (`/chat/completions`) or has one too many (`/v1/v1/messages`: an
 * Anthropic SDK adds `/v1` itself), under a package's `/p/NAME` or not.
 */
const MODEL_API_PATHS =
  /^(\/p\/[^/]+)?(\/v1\/v1)?\/(chat\/completions|completions|responses|embeddings|models|messages|messages\/count_tokens)(\/.*)?$/;

/**
 * Whether a path is a model API's sent to a base URL with its `/v1` wrong
 * (missing, or twice): a refusal of it is the client's API error, with
 * {@linkcode baseUrlHint}.
 *
 * @param path The path asked for (no query).
 * @returns True for such a path.
 */
export function isModelApiPath(path: string): boolean {
  return MODEL_API_PATHS.test(path);
}

/**
 * What to say of a path a model API client sent to a base URL with its
 * `/v1` wrong: without it (`OPENAI_BASE_URL=http://127.0.0.1:8848` sends
 * `/chat/completions`) or twice (`ANTHROPIC_BASE_URL=…/v1` sends
 * `/v1/v1/messages`): the path it meant, and the base URL to set.
 *
 * @param path The path asked for.
 * @returns The hint (starting with ": "), or "" for another path.
 *
 * @example
 * ```ts
 * import { baseUrlHint } from "./refusals.ts";
 * import { equal } from "node:assert/strict";
 * equal(
 *   baseUrlHint("/chat/completions"),
 *   ": did you mean /v1/chat/completions? The OpenAI SDKs' base URL ends with /v1: set OPENAI_BASE_URL (or base_url) to this server's URL followed by /v1",
 * );
 * equal(
 *   baseUrlHint("/v1/v1/messages"),
 *   ": did you mean /v1/messages? The Anthropic SDKs add /v1 themselves: set ANTHROPIC_BASE_URL to this server's URL, without /v1",
 * );
 * equal(baseUrlHint("/health"), "");
 * ```
 */
export function baseUrlHint(path: string): string {
  const m = MODEL_API_PATHS.exec(path);
  if (!m) return "";
  const prefix = m[1] ?? "";
  const meant = `${prefix}/v1/${m[3]}${m[4] ?? ""}`;
  if (m[3].startsWith("messages")) {
    return `: did you mean ${meant}? The Anthropic SDKs add /v1 themselves: set ANTHROPIC_BASE_URL to this server's URL${
      prefix ? ` followed by ${prefix}` : ""
    }, without /v1`;
  }
  return `: did you mean ${meant}? The OpenAI SDKs' base URL ends with /v1${
    m[2] ? " (once)" : ""
  }: set OPENAI_BASE_URL (or base_url) to this server's URL followed by ${prefix}/v1`;
}

/** The path has routes, none for this method (405 with `Allow`). */
export class MethodNotAllowedError extends HttpError {
  /** The methods the path takes, for the `Allow` header. */
  readonly allow: readonly string[];
  /**
   * Create a `MethodNotAllowedError`.
   *
   * @param options The method and path asked for, and the methods allowed.
   */
  constructor(
    options: { method: string; path: string; allow: readonly string[] },
  ) {
    super(
      405,
      `Method ${options.method} is not allowed on ${options.path}: use ${
        options.allow.join(", ")
      }`,
      {
        code: "method_not_allowed",
        headers: { allow: options.allow.join(", ") },
      },
    );
    this.name = "MethodNotAllowedError";
    this.allow = options.allow;
  }
}

/**
 * The request may not come here (403): it comes from a web page (Origin),
 * names another host (DNS rebinding), or carries a wrong admin key.
 */
export class ForbiddenRequestError extends HttpError {
  /**
   * Create a `ForbiddenRequestError`.
   *
   * @param message Why, and what is accepted instead.
   */
  constructor(message: string) {
    super(403, message, { code: "forbidden" });
    this.name = "ForbiddenRequestError";
  }
}

/** The server's token is missing or wrong (401 with `WWW-Authenticate`). */
export class UnauthorizedError extends HttpError {
  /**
   * Create a `UnauthorizedError`.
   *
   * @param message Where to send the token.
   */
  constructor(message: string) {
    super(401, message, {
      code: "unauthorized",
      headers: { "www-authenticate": "Bearer" },
    });
    this.name = "UnauthorizedError";
  }
}

/** The body's Content-Type or Content-Encoding is not one the route reads (415). */
export class UnsupportedMediaTypeError extends HttpError {
  /**
   * Create a `UnsupportedMediaTypeError`.
   *
   * @param message What was sent and what to send.
   */
  constructor(message: string) {
    super(415, message, { code: "unsupported_media_type" });
    this.name = "UnsupportedMediaTypeError";
  }
}

/** Too many requests are in flight (503 with `Retry-After`). */
export class ServerBusyError extends HttpError {
  /** Seconds to wait before retrying. */
  readonly retryAfterSeconds: number;
  /**
   * Create a `ServerBusyError`.
   *
   * @param retryAfterSeconds Seconds to wait before retrying.
   */
  constructor(retryAfterSeconds = 1) {
    super(503, "The ingest server is busy: retry shortly", {
      code: "server_busy",
      headers: { "retry-after": String(retryAfterSeconds) },
    });
    this.name = "ServerBusyError";
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
