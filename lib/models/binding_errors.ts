/**
 * The errors of the model bindings: a configuration that cannot work
 * (`ModelConfigError`), an API that failed or could not be reached
 * (`ModelApiError`), and an answer that is not what the wire format or the
 * request promised (`ModelResponseError`). None of them ever carries the
 * API key: messages are built from what the API said with the key cut out
 * ({@linkcode redactSecret}), and the SDK's own error is kept as `cause` only
 * when the key does not occur in it.
 *
 * @module
 */

/** A model id, provider or key that cannot work; the message says what to set. */
export class ModelConfigError extends Error {
  /** The environment variable (or flag) to set, when one would fix it. */
  readonly variable: string | null;
  /**
   * Create a `ModelConfigError`.
   *
   * @param message What is wrong and what to set.
   * @param options The variable to set, and a cause.
   */
  constructor(
    message: string,
    options: ErrorOptions & { variable?: string } = {},
  ) {
    super(message, options.cause ? { cause: options.cause } : undefined);
    this.name = "ModelConfigError";
    this.variable = options.variable ?? null;
  }
}

/** How a request to a model API failed. */
export type ModelApiFailure = "http" | "connection" | "timeout";

/** Details of a {@linkcode ModelApiError}. */
export interface ModelApiErrorDetails {
  /** How it failed. */
  failure: ModelApiFailure;
  /** HTTP status of the last answer (null when none came). */
  status: number | null;
  /** Requests sent (1 + retries). */
  attempts: number;
  /** The API's own error message, key removed (null when none). */
  apiMessage: string | null;
  /** The endpoint's base URL. */
  url: string;
  /** Model id (`provider/model`). */
  model: string;
}

/** A model API that answered with an error, timed out or could not be reached. */
export class ModelApiError extends Error {
  /** How it failed. */
  readonly failure: ModelApiFailure;
  /** HTTP status of the last answer (null when none came). */
  readonly status: number | null;
  /** Requests sent (1 + retries). */
  readonly attempts: number;
  /** Whether the binding retried before giving up. */
  readonly retried: boolean;
  /** The API's own error message, key removed (null when none). */
  readonly apiMessage: string | null;
  /** The endpoint's base URL. */
  readonly url: string;
  /**
   * Create a `ModelApiError`; the message is composed from the details and
   * says what to check.
   *
   * @param details What happened.
   * @param options Cause (never one that holds the key).
   */
  constructor(details: ModelApiErrorDetails, options?: ErrorOptions) {
    super(apiErrorMessage(details), options);
    this.name = "ModelApiError";
    this.failure = details.failure;
    this.status = details.status;
    this.attempts = details.attempts;
    this.retried = details.attempts > 1;
    this.apiMessage = details.apiMessage;
    this.url = details.url;
  }
}

/** An answer that is not JSON, not the wire shape, or not the structured output asked for. */
export class ModelResponseError extends Error {
  /** The start of the offending text (at most 500 characters), key removed. */
  readonly excerpt: string | null;
  /**
   * Create a `ModelResponseError`.
   *
   * @param message What is wrong with the answer.
   * @param options The offending text's start, and a cause.
   */
  constructor(
    message: string,
    options: ErrorOptions & { excerpt?: string | null } = {},
  ) {
    super(message, options.cause ? { cause: options.cause } : undefined);
    this.name = "ModelResponseError";
    this.excerpt = options.excerpt == null
      ? null
      : options.excerpt.slice(0, 500);
  }
}

/**
 * Cut every occurrence of a secret out of a text.
 *
 * @param text The text.
 * @param secret The secret (keys shorter than 4 characters are left alone:
 *   they are placeholders, and cutting them would garble the text).
 * @returns The text with `[redacted]` in place of the secret.
 */
export function redactSecret(text: string, secret: string | null): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join("[redacted]");
}

/**
 * Whether an API's error message says the request itself cannot succeed
 * as sent: the answer hit a token cap or the context length (a server
 * that cuts a tool call off at its token cap answers 500 with such a
 * message). Sending the same request again would only repeat the whole
 * generation and fail the same way.
 *
 * @param message The API's error message.
 * @returns True when a retry cannot help.
 */
export function retryCannotHelp(message: string): boolean {
  return /max[_ ]?(?:completion[_ ]?)?tokens|token (?:cap|limit)|context (?:length|window)|maximum context|too many tokens|length limit/i
    .test(message);
}

function retriesText(attempts: number): string {
  const r = attempts - 1;
  return r === 0 ? "not retried" : `retried ${r} time${r === 1 ? "" : "s"}`;
}

function apiErrorMessage(d: ModelApiErrorDetails): string {
  const said = d.apiMessage ? `: ${JSON.stringify(d.apiMessage)}` : "";
  const tries = retriesText(d.attempts);
  if (d.failure === "connection") {
    return `Cannot reach the model API at ${d.url} for ${d.model} (${tries}); check the URL (--model-url or the provider's *_BASE_URL) and that the server is running`;
  }
  if (d.failure === "timeout") {
    return `The model API at ${d.url} did not answer in time for ${d.model} (${tries}); check that the server is up and not overloaded, or raise the time-out (--model-timeout SECONDS)`;
  }
  const s = d.status ?? 0;
  const what = s === 401 || s === 403
    ? "check the API key (it was refused)"
    : s === 404
    ? "check the model name and the base URL"
    : s === 429
    ? "rate limited: wait, lower the request rate or check the account's quota"
    : d.apiMessage && retryCannotHelp(d.apiMessage)
    ? "the request ran into the server's token cap or context length, as its message says: sending it again would fail the same way; raise the token limit (the server's, or --max-tokens when the request set it)"
    : s >= 500 && d.apiMessage
    ? "the server failed on this request, as its message says (if that is a passing fault, try again later)"
    : s >= 500
    ? "the server failed: try again later"
    : "check the model name and that it supports the request (tools, structured output)";
  return `The model API at ${d.url} answered ${s} for ${d.model} (${tries})${said}; ${what}`;
}
