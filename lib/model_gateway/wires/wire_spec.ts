/**
 * {@linkcode WireSpec}: everything the gateway knows of one model API (a
 * "wire"), in one object exported by the wire's folder
 * (`lib/model_gateway/wires/<name>/mod.ts`): its paths, how a request and
 * an answer (whole and streamed) are read into the gateway's neutral shapes,
 * how the gateway writes that API (narrowed tools, a request asked again with
 * refusals, answers of its own), its error shape, its usage, its upstream
 * (default base URL, environment variable, `serve` flag, how a path is
 * joined to it) and where the client's key travels. The registry
 * (`registry.ts`) lists the specs; the route table, the stats, `/health`,
 * the CLI's flags and environment names and the installers read it, and
 * nothing else names a wire.
 *
 * @module
 */
import type { NormRequest, NormUsage, WireReader } from "../wire_types.ts";
import type { WireWriter } from "../wire_writers.ts";

/**
 * What a path of a wire is: recorded (an exchange the gateway reads and
 * records), or forwarded only (token counting, model lists).
 */
export interface WireRoute {
  /** The API path as the client sent it (no query, no `/p/<name>` prefix). */
  path: string;
  /** Recorded (the gateway reads the request and its answer). */
  recorded: boolean;
  /** The answer is a stream by the path (`:streamGenerateContent`); else the body says. */
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
  /** The pattern the route table matches (an exact path or an anchored pattern). */
  readonly path: string | RegExp;
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

/** The upstream of a wire (wires of one provider share it: OpenAI's Chat and Responses). */
export interface WireUpstream {
  /** Its name: the `/health` key, `--upstream-<name>`, `HARNESS_UPSTREAM_<NAME>`. */
  readonly name: string;
  /** The public API's base URL, as its official SDK takes it. */
  readonly default: string;
  /** The path prefix a request's path loses before it is joined to the base URL (OpenAI's base URL holds `/v1`). */
  readonly strip: string;
  /** Who it is for people (`OpenAI-compatible`, `Anthropic`, `Gemini API`). */
  readonly title: string;
  /** The variable its SDKs and agents take their base URL from (`OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL` …). */
  readonly sdk_env: string;
  /** What that base URL adds to the server's URL (`/v1` for OpenAI's SDKs, else nothing). */
  readonly sdk_path: string;
}

/** Where a client's key travels (forwarded to the upstream; never recorded). */
export interface WireKey {
  /** Request headers that may carry it (lower-case). */
  readonly headers: readonly string[];
  /** Query parameters that may carry it. */
  readonly query: readonly string[];
}

/**
 * What a wire needs of the events other routes store (Gemini CLI's hooks
 * name no session in the requests: the episode is found by the prompt).
 */
export interface HookJoin {
  /**
   * Learn of an event another route stored.
   *
   * @param ev The event.
   */
  observe(
    ev: {
      capture_id: string;
      episode_id: string;
      kind: string;
      source: { host: string };
      payload: unknown;
    },
  ): void;
  /**
   * The hooks' episode a request belongs to, when the hooks tell.
   *
   * @param capture The request's capture.
   * @param request The request as read.
   * @returns The episode id, or null.
   */
  episodeOf(capture: string, request: NormRequest): string | null;
}

/** One model API, whole. */
export interface WireSpec {
  /** The wire recorded in `model.requested.payload.request.wire` and `source.adapter` (`gemini_generate_content`). */
  readonly wire: string;
  /** The API's name for people (`Gemini generateContent`). */
  readonly title: string;
  /** Its paths, for the route table and the docs, in the order they are tried. */
  readonly paths: readonly WirePath[];
  /** The path prefixes (API versions) it answers under: `/v1/`, `/v1beta/` … */
  readonly prefixes: readonly string[];
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
  /**
   * A reader for one exchange on a route (fresh for each: some wires read
   * the answer by its request, e.g. Gemini's call ids by their place).
   *
   * @param route The route the request came on.
   * @returns The reader.
   */
  reader(route: WireRoute): WireReader;
  /** Writing the API (package serving). */
  readonly writer: WireWriter;
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
    /** The body's key that holds the list (the recorder keeps only the new items). */
    readonly key: string;
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
  /**
   * Answers' ids continue conversations upstream (the Responses API's
   * `previous_response_id`): the gateway remembers each answer's id, and a
   * request naming one is not served by a package.
   */
  readonly continues_by_id?: boolean;
  /**
   * Whether an answer (whole, or one stream event) holds answers other than
   * the first (Chat's `choices`, Gemini's `candidates`): a package cannot
   * check each, so such an answer is not relayed under one.
   *
   * @param answer The answer or event, parsed.
   * @returns True when it holds others.
   */
  others?(answer: unknown): boolean;
  /** A fresh join of the hooks' episodes (Gemini CLI), when the wire has one. */
  hooks?(): HookJoin;
}
