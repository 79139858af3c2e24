/**
 * What a compiled package served inside the model gateway did in one
 * episode, read from the events the gateway records (pure):
 *
 * - `model.requested` `payload.package` = `{id: "<name>@<digest>", outcome:
 *   "served" | "forwarded" | "passed_through" | "gave_up", reason?}` on
 *   every exchange under a package (`reason`: why it passed through);
 * - `model.responded` with `served_by: <name>@<digest>`: an answer the
 *   package made itself (usage zero), its calls the `tool.call.started`
 *   events with those `host_call_id`s;
 * - `model.responded` with `refused: [{tool, reason, arguments}]`: an
 *   answer of the model the package refused (the agent never saw it; its
 *   tokens were charged).
 *
 * Captures recorded before `payload.package` existed still show what
 * `served_by` and `refused` say (forwarded and passed-through requests are
 * then not told apart from plain ones).
 *
 * **Tokens saved (an estimate, given as bounds).** An answer the package
 * served is an upstream request not made (exact). What that request would
 * have cost is not known, but it is bounded: a conversation only grows, so
 * the skipped request would have resent at least the whole prompt of the
 * episode's latest upstream request before it, and at most what the
 * episode's next upstream request after it sent (that one holds the skipped
 * request's messages plus the served calls and their results). So each
 * served answer adds that earlier request's prompt tokens to the lower
 * bound (0 when there was none: a package's lookups often come first) and
 * the later one's to the upper bound (none when no upstream request came
 * after it: the upper bound is then unknown). Prompt tokens are
 * `input_tokens` as the upstream reported them (Anthropic's leave out cache
 * reads and writes, on both bounds). Output tokens are not estimated. What
 * refused answers cost (their tokens, as charged) is shown beside it, not
 * netted out; a give-up saved no request.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";

/** `payload.source` of the model gateway's events. */
const GATEWAY = "model_gateway";

/** How the gateway handled one request under a package. */
export type PackageOutcome =
  | "served"
  | "forwarded"
  | "passed_through"
  | "gave_up";

/** An answer the package made itself. */
export interface ServedAnswer {
  /** Sequence of its `model.responded`. */
  sequence: number;
  /** The package (`<name>@<digest>`). */
  package: string;
  /** The calls it answered with, and their arguments. */
  calls: { tool: string; arguments: unknown }[];
  /** Its words (an answer after the model's choices were refused), or "". */
  text: string;
  /** Whether it answered in words after refusing the model (gave up). */
  gave_up: boolean;
}

/** A call of the model the package refused. */
export interface RefusedCall {
  /** Sequence of the refused answer's `model.responded`. */
  sequence: number;
  /** The tool. */
  tool: string;
  /** The arguments the model gave. */
  arguments: unknown;
  /** Why the package refused it. */
  reason: string;
}

/** A request the package did not fit, forwarded untouched. */
export interface PassThrough {
  /** Sequence of its `model.requested`. */
  sequence: number;
  /** Why it did not fit. */
  reason: string;
}

/**
 * Prompt tokens saved by served answers: an estimate, given as bounds (see
 * the module).
 */
export interface TokensSaved {
  /** Served answers that saved an upstream request (give-ups excluded). */
  requests: number;
  /** Lower bound: over them, the prompt tokens of the episode's latest upstream request before each (0 when none). */
  prompt_at_least: number;
  /**
   * Upper bound: over them, the prompt tokens of the episode's first
   * upstream request after each; null when one has none after it.
   */
  prompt_at_most: number | null;
  /** Of them, those with no upstream request before them (counted 0 in the lower bound). */
  no_request_before: number;
  /** Of them, those with no upstream request after them (no upper bound). */
  no_request_after: number;
}

/** What a package did in one episode. */
export interface EpisodePackageActivity {
  /** The packages seen (`<name>@<digest>`). */
  packages: string[];
  /** Requests by outcome (forwarded and passed_through only where recorded). */
  requests: Record<PackageOutcome, number>;
  /** Answers the package made. */
  served: ServedAnswer[];
  /** Calls of the model it refused. */
  refused: RefusedCall[];
  /** Requests it did not fit, and why. */
  passed_through: PassThrough[];
  /** Upstream answers in the episode (refused ones included) and what the refused ones cost. */
  upstream: {
    answers: number;
    refused_answers: number;
    refused_tokens: { input: number; output: number };
  };
  /** The estimate of prompt tokens saved (see the module). */
  tokens_saved: TokensSaved;
}

type Usage = { input_tokens?: unknown; output_tokens?: unknown };

function usageOf(payload: Record<string, unknown>): Usage | null {
  const r = payload.response as { usage?: Usage } | null | undefined;
  return r?.usage ?? null;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function packageField(
  payload: Record<string, unknown>,
): { id: string; outcome: PackageOutcome; reason?: string } | null {
  const p = payload.package as Record<string, unknown> | undefined;
  if (!p || typeof p.id !== "string" || typeof p.outcome !== "string") {
    return null;
  }
  const outcome = p.outcome as PackageOutcome;
  if (
    !["served", "forwarded", "passed_through", "gave_up"].includes(outcome)
  ) return null;
  return {
    id: p.id,
    outcome,
    ...(typeof p.reason === "string" ? { reason: p.reason } : {}),
  };
}

/**
 * Follows one episode's events as they are read (streaming: only the
 * arguments of the calls the package answered are kept).
 */
export class PackageActivityTracker {
  #packages = new Set<string>();
  #requests: Record<PackageOutcome, number> = {
    served: 0,
    forwarded: 0,
    passed_through: 0,
    gave_up: 0,
  };
  #served: ServedAnswer[] = [];
  #refused: RefusedCall[] = [];
  #passed: PassThrough[] = [];
  #upstream = {
    answers: 0,
    refused_answers: 0,
    refused_tokens: { input: 0, output: 0 },
  };
  #saved: TokensSaved = {
    requests: 0,
    prompt_at_least: 0,
    prompt_at_most: 0,
    no_request_before: 0,
    no_request_after: 0,
  };
  /** Served answers since the last upstream request (their upper bound is the next one's prompt). */
  #awaitingNext = 0;
  /** The outcome each request was recorded with, by its event id. */
  #outcomeOf = new Map<string, PackageOutcome>();
  /** Calls the package answered, waiting for their `tool.call.started`. */
  #wanted = new Map<string, { tool: string; arguments: unknown }>();
  #lastPrompt: number | null = null;
  #any = false;

  /**
   * Look at the episode's next event.
   *
   * @param ev The event (blobs resolved or not: only small fields are read).
   */
  observe(ev: TraceEvent): void {
    const p = ev.payload as Record<string, unknown>;
    if (ev.kind === "tool.call.started") {
      const id = p.host_call_id;
      const call = typeof id === "string" ? this.#wanted.get(id) : undefined;
      if (call) {
        call.arguments = p.arguments ?? null;
        this.#wanted.delete(id as string);
      }
    } else if (ev.kind === "model.requested") this.#requested(ev, p);
    else if (ev.kind === "model.responded") this.#responded(ev, p);
  }

  #requested(ev: TraceEvent, p: Record<string, unknown>): void {
    const pkg = packageField(p);
    if (!pkg) return;
    this.#any = true;
    this.#packages.add(pkg.id);
    this.#requests[pkg.outcome]++;
    this.#outcomeOf.set(ev.event_id, pkg.outcome);
    if (pkg.outcome === "passed_through") {
      this.#passed.push({ sequence: ev.sequence, reason: pkg.reason ?? "" });
    }
  }

  #responded(ev: TraceEvent, p: Record<string, unknown>): void {
    const usage = usageOf(p);
    const by = typeof p.served_by === "string" ? p.served_by : null;
    if (Array.isArray(p.refused)) {
      this.#any = true;
      const u = this.#upstream;
      u.answers++;
      u.refused_answers++;
      u.refused_tokens.input += num(usage?.input_tokens);
      u.refused_tokens.output += num(usage?.output_tokens);
      for (const r of p.refused as Record<string, unknown>[]) {
        this.#refused.push({
          sequence: ev.sequence,
          tool: String(r?.tool ?? "?"),
          arguments: r?.arguments ?? {},
          reason: String(r?.reason ?? ""),
        });
      }
      this.#upstreamPrompt(usage);
      return;
    }
    if (by !== null) {
      this.#servedAnswer(ev, p, by);
      return;
    }
    // An upstream answer: a model call the upstream charged.
    if (p.response === null || p.response === undefined) return;
    if (p.source === GATEWAY) this.#upstream.answers++;
    this.#upstreamPrompt(usage);
  }

  /** An upstream request's prompt: the served answers before it are bounded above by it. */
  #upstreamPrompt(usage: Usage | null): void {
    if (typeof usage?.input_tokens !== "number") return;
    this.#lastPrompt = usage.input_tokens;
    if (this.#awaitingNext > 0 && this.#saved.prompt_at_most !== null) {
      this.#saved.prompt_at_most += this.#awaitingNext * usage.input_tokens;
    }
    this.#awaitingNext = 0;
  }

  #servedAnswer(ev: TraceEvent, p: Record<string, unknown>, by: string) {
    this.#any = true;
    this.#packages.add(by);
    const r = (p.response ?? {}) as {
      text?: unknown;
      tool_call_ids?: unknown;
      tool_calls?: unknown;
    };
    const ids = Array.isArray(r.tool_call_ids) ? r.tool_call_ids : [];
    const names = Array.isArray(r.tool_calls) ? r.tool_calls : [];
    const recorded = ev.parent_event_id
      ? this.#outcomeOf.get(ev.parent_event_id)
      : undefined;
    const text = typeof r.text === "string" ? r.text : "";
    const gaveUp = recorded === "gave_up" ||
      (recorded === undefined && names.length === 0 && text !== "");
    if (recorded === undefined) this.#requests[gaveUp ? "gave_up" : "served"]++;
    const calls = names.map((name, i) => {
      const call = { tool: String(name), arguments: null as unknown };
      if (typeof ids[i] === "string") this.#wanted.set(ids[i], call);
      return call;
    });
    this.#served.push({
      sequence: ev.sequence,
      package: by,
      calls,
      text,
      gave_up: gaveUp,
    });
    // A give-up follows refused upstream answers: it saved no request.
    if (gaveUp) return;
    this.#saved.requests++;
    this.#awaitingNext++;
    if (this.#lastPrompt === null) this.#saved.no_request_before++;
    else this.#saved.prompt_at_least += this.#lastPrompt;
  }

  /** What the package did, or null when no package took part. */
  result(): EpisodePackageActivity | null {
    if (!this.#any) return null;
    const saved = { ...this.#saved };
    if (this.#awaitingNext > 0) {
      saved.no_request_after = this.#awaitingNext;
      saved.prompt_at_most = null;
    }
    return {
      packages: [...this.#packages].sort(),
      requests: { ...this.#requests },
      served: this.#served,
      refused: this.#refused,
      passed_through: this.#passed,
      upstream: this.#upstream,
      tokens_saved: saved,
    };
  }
}

/**
 * What a package did in an episode, or null when no package took part.
 *
 * @param events The episode's events, in sequence order.
 * @returns The activity, or null.
 */
export function packageActivity(
  events: Iterable<TraceEvent>,
): EpisodePackageActivity | null {
  const t = new PackageActivityTracker();
  for (const ev of events) t.observe(ev);
  return t.result();
}

/** Capture-wide totals of {@linkcode packageActivity}. */
export interface PackageTotals {
  /** The packages seen. */
  packages: string[];
  /** Episodes a package took part in. */
  episodes: number;
  /** Requests by outcome. */
  requests: Record<PackageOutcome, number>;
  /** Refused calls. */
  refused_calls: number;
  /** Upstream answers in those episodes, refused ones, and what those cost. */
  upstream: EpisodePackageActivity["upstream"];
  /** The estimate of prompt tokens saved. */
  tokens_saved: TokensSaved;
}

/**
 * Sum the episodes' activity.
 *
 * @param all Each episode's activity (null where no package took part).
 * @returns The totals, or null when no package took part anywhere.
 */
export function packageTotals(
  all: Iterable<EpisodePackageActivity | null>,
): PackageTotals | null {
  let t: PackageTotals | null = null;
  const packages = new Set<string>();
  for (const a of all) {
    if (!a) continue;
    t ??= {
      packages: [],
      episodes: 0,
      requests: { served: 0, forwarded: 0, passed_through: 0, gave_up: 0 },
      refused_calls: 0,
      upstream: {
        answers: 0,
        refused_answers: 0,
        refused_tokens: { input: 0, output: 0 },
      },
      tokens_saved: {
        requests: 0,
        prompt_at_least: 0,
        prompt_at_most: 0,
        no_request_before: 0,
        no_request_after: 0,
      },
    };
    t.episodes++;
    for (const p of a.packages) packages.add(p);
    for (const k of Object.keys(t.requests) as PackageOutcome[]) {
      t.requests[k] += a.requests[k];
    }
    t.refused_calls += a.refused.length;
    t.upstream.answers += a.upstream.answers;
    t.upstream.refused_answers += a.upstream.refused_answers;
    t.upstream.refused_tokens.input += a.upstream.refused_tokens.input;
    t.upstream.refused_tokens.output += a.upstream.refused_tokens.output;
    const s = t.tokens_saved, e = a.tokens_saved;
    s.requests += e.requests;
    s.prompt_at_least += e.prompt_at_least;
    s.prompt_at_most = s.prompt_at_most === null || e.prompt_at_most === null
      ? null
      : s.prompt_at_most + e.prompt_at_most;
    s.no_request_before += e.no_request_before;
    s.no_request_after += e.no_request_after;
  }
  if (t) t.packages = [...packages].sort();
  return t;
}

function n(v: number): string {
  return v.toLocaleString("en-US");
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${n(count)} ${count === 1 ? one : many}`;
}

/**
 * The tokens-saved line: the exact count of upstream requests not made, and
 * the estimate of their prompt tokens as bounds, saying what each rests on.
 *
 * @param s The estimate.
 * @returns Text.
 */
export function tokensSavedText(s: TokensSaved): string {
  if (s.requests === 0) return "no answer served, no upstream request saved";
  const range = s.prompt_at_most === null
    ? `at least ${n(s.prompt_at_least)}`
    : `${n(s.prompt_at_least)} to ${n(s.prompt_at_most)}`;
  const notes = [
    s.no_request_before
      ? `${n(s.no_request_before)} had no upstream request before ${
        s.no_request_before === 1 ? "it" : "them"
      } (counted 0)`
      : "",
    s.no_request_after
      ? `${n(s.no_request_after)} had none after ${
        s.no_request_after === 1 ? "it" : "them"
      } (no upper figure)`
      : "",
  ].filter(Boolean);
  return `${
    plural(s.requests, "upstream request")
  } not made; prompt tokens saved: ${range} (an estimate: each skipped request would have resent at least the prompt of its episode's upstream request before it and at most that of the one after it${
    notes.length ? `; ${notes.join(", ")}` : ""
  })`;
}
