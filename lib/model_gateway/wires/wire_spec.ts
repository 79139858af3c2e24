/**
 * {@linkcode WireSpec}: everything the gateway knows of one model API (a
 * "wire"), in one object exported by the wire's folder
 * (`lib/model_gateway/wires/<name>/mod.ts`): its paths, how a request and
 * an answer (whole and streamed) are read into the gateway's neutral shapes,
 * how the gateway writes that API (narrowed tools, a request asked again with
 * refusals, answers of its own), its error shape, its usage, its upstream
 * (default base URL, environment variable, `serve` flag, how a path is
 * joined to it) and where the client's key travels.
 *
 * One registry of specs is meant to feed the route table, the stats,
 * `/health`, the CLI flags and environment names, `deno task serve`'s
 * network grants and the installers (issue 46 item 1, stage B). The three
 * wires the gateway spoke before this shape (OpenAI Chat, OpenAI
 * Responses, Anthropic Messages) move into it then; the Gemini wire
 * (`wires/gemini/`) is written in it first.
 *
 * @module
 */
import type {
  NormRequest,
  NormResponse,
  NormUsage,
  StreamAccumulator,
} from "../wire_types.ts";
import type { Narrowing, Refusal } from "../serving.ts";
import type { OwnAnswer, WrittenAnswer } from "../wire_writers.ts";

/** A request as a wire reads it: the neutral request, its wire named by the spec. */
export type WireRequest = Omit<NormRequest, "wire"> & {
  /** The spec's `wire` (the name recorded in `model.requested`). */
  wire: string;
};

/**
 * What a path of a wire is: recorded (an exchange the gateway reads and
 * records), or forwarded only (token counting, model lists).
 */
export interface WireRoute {
  /** The API path as the client sent it (no query, no `/p/<name>` prefix). */
  path: string;
  /** Recorded (the gateway reads the request and its answer). */
  recorded: boolean;
  /** The answer is a stream (decided by the path, e.g. `:streamGenerateContent`). */
  stream: boolean;
  /** The model the path names, when it names one (Gemini: `models/{model}:…`). */
  model: string | null;
  /** The API's method on that path (`generateContent`, `countTokens`, …), when it has one. */
  method: string | null;
}

/** One path pattern of a wire, for the route table and the docs. */
export interface WirePath {
  /** `GET`, `POST`, or `*`. */
  readonly method: string;
  /** The path as the docs show it (`/v1beta/models/{model}:generateContent`). */
  readonly shown: string;
  /** Recorded, or forwarded only. */
  readonly recorded: boolean;
  /** One line for the docs. */
  readonly what: string;
}

/** An upstream's error, in a few words (recorded in `model.responded.error`). */
export interface WireError {
  /** The API's own error type or status (`RESOURCE_EXHAUSTED`, `rate_limit_error`), else `http_<status>`. */
  type: string;
  /** Its message (bounded). */
  message: string;
}

/** An answer the gateway makes itself in the API's error shape. */
export interface WireErrorAnswer {
  /** HTTP status. */
  status: number;
  /** Headers (lower-case names). */
  headers: Record<string, string>;
  /** Body text. */
  body: string;
}

/** The upstream of a wire. */
export interface WireUpstream {
  /** The public API's base URL, as its official SDK takes it. */
  readonly default: string;
  /** The environment variable `serve` reads it from (`HARNESS_UPSTREAM_GEMINI`). */
  readonly env: string;
  /** The `serve` flag (`--upstream-gemini`). */
  readonly flag: string;
  /**
   * The URL a request goes to.
   *
   * @param base The upstream base URL (no trailing slash).
   * @param path The API path as the client sent it.
   * @param query The query string as sent (`""` or `?…`).
   * @returns The upstream URL.
   */
  url(base: string, path: string, query: string): string;
}

/** Where a client's key travels (forwarded to the upstream; never recorded). */
export interface WireKey {
  /** Request headers that may carry it (lower-case). */
  readonly headers: readonly string[];
  /** Query parameters that may carry it. */
  readonly query: readonly string[];
}

/** How the gateway reads a wire. */
export interface WireReaderSpec {
  /**
   * Read a request body.
   *
   * @param body The parsed JSON body.
   * @param route The path it came on (some wires name the model and the
   *   streaming there, not in the body).
   * @param hashes The hashes of the conversation's items
   *   ({@linkcode WireSpec.history}), when the caller made them already
   *   (a long conversation is hashed in slices, off one turn of the loop).
   * @returns What it says.
   * @throws {WireShapeError} When it is not this API's request shape.
   */
  request(body: unknown, route: WireRoute, hashes?: string[]): WireRequest;
  /**
   * Read a whole answer.
   *
   * @param body The parsed JSON body.
   * @param request The request it answers (call ids a wire leaves out are
   *   made from the call's place in the conversation).
   * @returns What it says.
   * @throws {WireShapeError} When it is not this API's answer shape.
   */
  response(body: unknown, request: WireRequest): NormResponse;
  /**
   * A fresh reader of a streamed answer's events.
   *
   * @param request The request it answers.
   */
  stream(request: WireRequest): StreamAccumulator;
}

/** How the gateway writes a wire (serving a compiled package). */
export interface WireWriterSpec {
  /**
   * The request body with its tools narrowed.
   *
   * @param body The body as sent.
   * @param n The narrowing.
   * @returns A new body.
   */
  withTools(body: Record<string, unknown>, n: Narrowing): Record<
    string,
    unknown
  >;
  /**
   * The request asked again: the model's refused answer, then each of its
   * calls answered (refused ones with the reason, the others not made).
   *
   * @param body The body last sent.
   * @param answer The model's answer.
   * @param refusals The refused calls.
   * @returns A new body.
   */
  withRefusals(
    body: Record<string, unknown>,
    answer: NormResponse,
    refusals: Refusal[],
  ): Record<string, unknown>;
  /**
   * An answer of the gateway's own, in the API's shape.
   *
   * @param a What it says.
   * @param options Streamed or whole; usage in the stream (chat's `include_usage`).
   * @returns Its bytes.
   */
  answer(
    a: OwnAnswer,
    options: { stream: boolean; usage: boolean },
  ): WrittenAnswer;
}

/** One model API, whole. */
export interface WireSpec {
  /** The registry's name (`gemini`): the folder, the flag and the environment name. */
  readonly name: string;
  /** The wire recorded in `model.requested.payload.request.wire` (`gemini_generate_content`). */
  readonly wire: string;
  /** The API's name for people (`Google Gemini API`). */
  readonly title: string;
  /** Its paths, for the route table and the docs. */
  readonly paths: readonly WirePath[];
  /**
   * Whether a request is this wire's, and how (null: not this wire's).
   *
   * @param method The HTTP method.
   * @param path The API path (no query, no `/p/<name>` prefix).
   * @param header One request header.
   * @returns The route, or null.
   */
  match(
    method: string,
    path: string,
    header: (name: string) => string | null,
  ): WireRoute | null;
  /** Its upstream. */
  readonly upstream: WireUpstream;
  /** Where the client's key travels. */
  readonly key: WireKey;
  /** Reading requests and answers. */
  readonly reader: WireReaderSpec;
  /** Writing the API (package serving). */
  readonly writer: WireWriterSpec;
  /**
   * Where a request body holds its conversation (Chat and Messages:
   * `messages`; Responses: `input`; Gemini: `contents`), one item per
   * message the reader reads.
   */
  readonly history: {
    /**
     * The conversation's items.
     *
     * @param body The parsed body.
     * @returns The items, or null when the body has none.
     */
    items(body: unknown): unknown[] | null;
    /**
     * The body with other items (the recorder keeps only the new ones).
     *
     * @param body The parsed body.
     * @param items The items to put in.
     * @returns A new body.
     */
    with(body: Record<string, unknown>, items: unknown[]): Record<
      string,
      unknown
    >;
  };
  /**
   * The API's usage object read as the neutral usage (the figures as the
   * upstream counted them, never added up from stream chunks).
   *
   * @param raw The API's usage object.
   * @returns The usage, or null when there is none.
   */
  usage(raw: unknown): NormUsage | null;
  /**
   * An error the gateway answers itself, in the API's shape.
   *
   * @param status HTTP status.
   * @param message What went wrong and what to do (never a credential).
   * @returns The answer.
   */
  error(status: number, message: string): WireErrorAnswer;
  /**
   * The error an upstream answered, in a few words.
   *
   * @param json Its body, parsed (null when it is not JSON).
   * @param status Its status.
   * @returns Type and message.
   */
  errorOf(json: unknown, status: number): WireError;
}
