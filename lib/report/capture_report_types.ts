/**
 * The record the HTML report of a capture is drawn from
 * (`harness.report.v1`): the chain status, and per episode the tool calls
 * (timing, status, parent), the model turns with tokens, and the
 * exact-lineage edges (which earlier result, at which path, fed which
 * argument). `capture_data.ts` gathers it from the store; `capture_html.ts`
 * draws it.
 *
 * @module
 */
import type {
  EpisodePackageActivity,
  PackageTotals,
} from "../control/package_activity.ts";

/** One tool call in the report. */
export interface ReportCall {
  /** Position in the episode's calls. */
  index: number;
  /** Sequence of its `tool.call.started`. */
  sequence: number;
  /** Event id of its `tool.call.started`. */
  event_id: string;
  /** Host tool name. */
  name: string;
  /** Milliseconds from the episode's first event. */
  start_ms: number;
  /** Duration, milliseconds (0 when it has no end). */
  duration_ms: number;
  /** `ok`, `failed`, `refused` (a guard or policy said no), `pending`. */
  status: "ok" | "failed" | "refused" | "pending";
  /** Index of the call that contains it, or null. */
  parent: number | null;
  /** Arguments, clipped JSON. */
  args: string;
  /** Result or error, clipped JSON. */
  result: string;
}

/** One lineage edge: an earlier result fed an argument. */
export interface ReportEdge {
  /** Step index whose result it came from. */
  from: number;
  /** Path inside that result. */
  path: string;
  /** Step index that used it. */
  to: number;
  /** Argument path. */
  arg: string;
}

/** One episode in the report. */
export interface ReportEpisode {
  /** Episode id. */
  episode_id: string;
  /** Recorded outcome. */
  success: boolean | null;
  /** Events in it. */
  events: number;
  /** Milliseconds from first to last event. */
  duration_ms: number;
  /**
   * Token usage summed over model turns, or null when none was recorded.
   * Where the model gateway recorded the episode only its count holds (as
   * `capture inspect` has it); `partial` when hooks could not count every
   * model call (`annotation usage.partial`) and no gateway did.
   */
  tokens: { input: number; output: number; partial?: true } | null;
  /**
   * Model turns (`model.responded`), milliseconds from the start; `served`
   * marks an answer a package made (no model call).
   */
  turns: {
    start_ms: number;
    model: string | null;
    tokens: number | null;
    served?: true;
  }[];
  /** Tool calls in order. */
  calls: ReportCall[];
  /** Lineage steps: tool and arguments with their sources. */
  steps: {
    index: number;
    tool: string;
    args: { arg: string; value: string; source: string | null; kind: string }[];
  }[];
  /** Lineage edges between steps. */
  edges: ReportEdge[];
  /** Why the outcome is what it is (the host's reason, an error), or null. */
  outcome_reason: string | null;
  /** Working directory the host gave, or null. */
  cwd: string | null;
  /** The conversation: user requests and assistant replies, in order. */
  messages: { role: string; text: string; start_ms: number }[];
  /** Wall-clock time of the first event (ISO 8601). */
  started_at: string;
  /** Whether it has events past a chain break (shown, not verified). */
  after_break: boolean;
  /**
   * What a package served at the model gateway did in it (answers served,
   * calls refused, pass-throughs, the estimate of tokens saved), or null
   * when none took part (`lib/control/package_activity.ts`); `tokens_text`
   * says the estimate in words, as `capture inspect` does.
   */
  package: (EpisodePackageActivity & { tokens_text: string }) | null;
}

/** Capture-wide figures. */
export interface ReportFigures {
  /** Per tool: calls, failed, refused. */
  tools: { name: string; calls: number; failed: number; refused: number }[];
  /** Tokens over every episode (`partial` when one episode's count is). */
  tokens: { input: number; output: number; partial?: true };
  /** Model turns over every episode (answers packages served included). */
  turns: number;
  /** Of them, answers packages served (no model call). */
  served_turns: number;
  /** First and last event times (ISO 8601). */
  first_at: string | null;
  /** Last event time. */
  last_at: string | null;
  /** Episode durations, milliseconds: median and max. */
  duration_ms: { median: number; max: number };
  /** What served packages did over every episode, or null when none took part. */
  package: (PackageTotals & { tokens_text: string }) | null;
}

/** Everything the report shows. */
export interface CaptureReportData {
  /** `harness.report.v1`. */
  schema_version: string;
  /** Capture id. */
  capture_id: string;
  /** Chain status. */
  chain: {
    ok: boolean;
    events: number;
    head_sequence: number;
    head_hash: string;
    problem: { line: number; sequence: number; message: string } | null;
  };
  /** Lineage totals. */
  totals: {
    steps: number;
    identifier_values: number;
    attributed: number;
    episodes: number;
  };
  /** Episodes in order of first event. */
  episodes: ReportEpisode[];
  /** Capture-wide figures. */
  figures: ReportFigures;
}
