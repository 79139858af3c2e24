/**
 * `compile.ts run PKG --capabilities MODULE.ts [--model PROVIDER/MODEL]
 * [--model-url URL] [--model-timeout S] [--max-tokens N]
 * [--user-file FILE.jsonl] [-- MODULE ARGS…]`: run a
 * compiled package in its form. A tree package runs once on the module's
 * input (residual leaves through the module's model binding, or through
 * `--model`); an agent-form package runs a conversation with `--model`:
 * scripted from `--user-file` (one user message per line: a JSON string,
 * `{"content": …}` or `{"text": …}`), else from standard input (one message
 * per line; on a terminal with a prompt).
 *
 * MODULE exports `createCapabilities({episode, args})` returning `{tools,
 * schemas?, instructions?, input?, model?, outcome?}`; `args` are the words
 * after `--`.
 *
 * With `--trace` the run is recorded in the store: into a capture of its
 * own (`run_<package>_<time>_<hex>`, finished when the run ends), or into
 * the capture `--capture ID` names (left open: it is the user's).
 *
 * With `--trust KEY …` the package must be signed by one of those keys
 * (checked before the capabilities module is loaded).
 *
 * A run that fails on the way (the model API fails, a tool cannot be
 * bound) is still printed, `--json` included, with `status: "failed"` and
 * its `error`; the traced episode is finished with the error recorded.
 *
 * @module
 */
import type { ChatModel } from "../models/chat_types.ts";
import type { PackageCapabilities } from "../forms/form_table.ts";
import type { RecordingSink } from "../tool_gateway/open_sink.ts";
import type { Io } from "./io.ts";
import { UsageError } from "./io.ts";
import { annotation } from "../trace/episode_events.ts";
import { CAPTURE_EPISODE } from "../lineage/episodes.ts";

/** Options of {@linkcode runCommand}, from the command line. */
export interface RunCommandOptions {
  /** The package file. */
  package: string;
  /** The capabilities module. */
  capabilities: string;
  /** `provider/model`. */
  model?: string;
  /** The model API's base URL. */
  modelUrl?: string;
  /** `--model-timeout`: seconds each model request may take (the bindings' 60 by default). */
  modelTimeout?: string;
  /** `--max-tokens`: most tokens per model answer (sent as the request's `max_tokens`). */
  maxTokens?: string;
  /** Scripted user messages (JSONL). */
  userFile?: string;
  /** Episode number handed to the module. */
  episode?: string;
  /** Tree form: the input text. */
  input?: string;
  /** Trace into the store. */
  trace?: boolean;
  /** Trace capture id. */
  capture?: string;
  /**
   * Trusted keys (`ed25519:<x>` or key files): when given, a package that
   * no one of them signed is refused before anything is loaded or run.
   */
  trust?: string[];
  /** Store root (for tracing). */
  root: string;
  /** One JSON object out. */
  json?: boolean;
  /** Words after `--`, for the module. */
  args?: string[];
  /** Environment values the model bindings may read (granted ones only). */
  env?: Record<string, string | undefined>;
  /** Standard input lines (agent form without --user-file). */
  stdinLines?: () => AsyncIterable<string>;
}

/**
 * Parse a user file: one message per line (a JSON string, an object with
 * `content` or `text`); blank lines and `#` comments are skipped.
 *
 * @param text The file's text.
 * @param path For errors.
 * @returns The messages.
 * @throws {UsageError} A line that is none of those.
 */
export function parseUserFile(text: string, path: string): string[] {
  const out: string[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new UsageError(
        `${path}:${
          i + 1
        }: not JSON; write one JSON string or {"content": "..."} per line`,
      );
    }
    const msg = typeof v === "string"
      ? v
      : typeof v === "object" && v !== null
      ? (v as { content?: unknown; text?: unknown }).content ??
        (v as { text?: unknown }).text
      : undefined;
    if (typeof msg !== "string") {
      throw new UsageError(
        `${path}:${
          i + 1
        }: expected a JSON string or an object with "content" (or "text")`,
      );
    }
    out.push(msg);
  });
  return out;
}

function toFileUrl(path: string, cwd: string): string {
  if (/^[a-z]+:/.test(path)) return path;
  return new URL(path, `file://${cwd}/`).href;
}

async function loadCapabilities(
  o: RunCommandOptions,
  cwd: string,
): Promise<PackageCapabilities> {
  const mod = await import(toFileUrl(o.capabilities, cwd));
  if (typeof mod.createCapabilities !== "function") {
    throw new UsageError(
      `${o.capabilities} does not export createCapabilities({episode, args})`,
    );
  }
  const caps = await mod.createCapabilities({
    ...(o.episode !== undefined ? { episode: Number(o.episode) } : {}),
    args: o.args ?? [],
  });
  if (!caps || typeof caps.tools !== "object") {
    throw new UsageError(
      `${o.capabilities}: createCapabilities() must return {tools, …}`,
    );
  }
  return caps;
}

/**
 * A positive number flag's value.
 *
 * @param flag The flag, for the message.
 * @param value Its text, if given.
 * @param integer Whether it must be a whole number.
 * @returns The number, or undefined when not given.
 * @throws {UsageError} Anything but a positive number.
 */
function positiveFlag(
  flag: string,
  value: string | undefined,
  integer: boolean,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0) || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new UsageError(
      `--${flag} ${JSON.stringify(value)}: give a positive ${
        integer ? "whole number" : "number"
      }`,
    );
  }
  return n;
}

async function openChat(o: RunCommandOptions): Promise<ChatModel | null> {
  if (!o.model) return null;
  const seconds = positiveFlag("model-timeout", o.modelTimeout, false);
  const { openModel } = await import("../models/open_model.ts");
  return openModel(o.model, {
    url: o.modelUrl,
    env: o.env ?? {},
    ...(seconds !== undefined ? { timeoutMs: Math.round(seconds * 1000) } : {}),
  });
}

/**
 * Run a package from the command line.
 *
 * @param o The package file and the options.
 * @param io Output.
 * @returns Exit code (0: completed).
 * @throws {UsageError} Bad options (no model for a conversation, a bad user file, a bad `--trust` value).
 * @throws {UntrustedPackageError} With `trust`: a package no trusted key signed.
 */
export async function runCommand(
  o: RunCommandOptions,
  io: Io,
): Promise<number> {
  const maxTokens = positiveFlag("max-tokens", o.maxTokens, true);
  positiveFlag("model-timeout", o.modelTimeout, false);
  const packagePath = o.package;
  const { loadPackage } = await import("../forms/validate_package.ts");
  const { runPackage } = await import("../forms/run_package.ts");
  const { describeRun, formOf } = await import("../forms/form_table.ts");
  const pkg = loadPackage(packagePath);
  if (o.trust?.length) {
    const { trustedKeys } = await import("./cmd_verify.ts");
    const { checkTrust } = await import(
      "../package/package_signature.ts"
    );
    await checkTrust(pkg, await trustedKeys(o.trust));
  }
  const form = formOf(pkg.ir);
  const cwd = Deno.cwd();
  if (form.conversation && !o.model) {
    throw new UsageError(
      `${packagePath} runs a conversation (its form is ${form.name}): give --model openai/MODEL or anthropic/MODEL (and --model-url for a local server)`,
    );
  }
  let users: string[] | AsyncIterable<string> = [];
  if (form.conversation) {
    if (o.userFile) {
      let text: string;
      try {
        text = Deno.readTextFileSync(o.userFile);
      } catch (err) {
        throw new UsageError(
          `Cannot read the user file ${o.userFile}: ${(err as Error).message}`,
        );
      }
      users = parseUserFile(text, o.userFile);
    } else if (o.stdinLines) users = o.stdinLines();
  }
  const caps = await loadCapabilities(o, cwd);
  if (o.input !== undefined) caps.input = { ...caps.input, text: o.input };
  const chat = await openChat(o);
  let sink: RecordingSink | null = null;
  // A run traced into no named capture gets a capture of its own, started
  // here and finished when the run ends; a named one is the user's: the
  // run adds its episode and leaves the capture open.
  const own = o.capture === undefined;
  const captureId = o.capture ?? runCaptureId(pkg.manifest.name);
  const captureCtx = {
    captureId,
    episodeId: CAPTURE_EPISODE,
    source: { host: "harness", adapter: "compile-run", model: null },
  };
  if (o.trace) {
    const { openRecordingSink } = await import("../tool_gateway/open_sink.ts");
    sink = openRecordingSink(o.root, captureId, { role: "runtime" });
    if (own) {
      sink.emit(annotation(captureCtx, {
        type: "capture.started",
        label: `run of ${pkg.manifest.name}`,
      }));
    }
  }
  try {
    const run = await runPackage(pkg, caps, {
      chat,
      maxTokens,
      users,
      sink,
      captureId,
      episodeId: `run_${o.episode ?? Date.now()}`,
      onTurn: o.json ? undefined : (_user, turn) => {
        io.out(
          turn.status === "replied"
            ? `assistant: ${turn.reply}`
            : `(stopped: ${turn.reason})`,
        );
      },
    });
    const outcome = caps.outcome?.() ?? null;
    if (o.json) {
      io.out(
        JSON.stringify({ form: run.form, ...run.result, outcome }, null, 2),
      );
    } else {
      for (const line of describeRun(run, pkg)) io.out(line);
      if (run.result.error) {
        io.err(`harness run: ${run.result.error.message}`);
      }
      if (outcome) io.out(`  outcome: ${JSON.stringify(outcome)}`);
      if (sink) io.out(`  trace: capture ${captureId} (via ${sink.mode})`);
    }
    return run.result.status === "completed" ? 0 : 1;
  } finally {
    if (sink && own) {
      sink.emit(annotation(captureCtx, { type: "capture.finished" }));
    }
    await sink?.close();
  }
}

/**
 * The capture of a traced run nobody named: `run_<package>_<UTC time>_<4
 * hex>`, new per run (a finished capture takes no more events).
 *
 * @param name The package's name.
 * @returns The capture id.
 */
export function runCaptureId(name: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(
    "T",
    "-",
  ).slice(0, 15);
  return `run_${name}_${stamp}_${crypto.randomUUID().slice(0, 4)}`;
}

/**
 * Standard input as user messages, one per line (a terminal gets a
 * `you> ` prompt on stderr).
 *
 * @returns The lines, as they come.
 */
export async function* stdinLines(): AsyncIterable<string> {
  const tty = Deno.stdin.isTerminal();
  const decoder = new TextDecoder();
  let buf = "";
  const prompt = () => {
    if (tty) Deno.stderr.writeSync(new TextEncoder().encode("you> "));
  };
  prompt();
  for await (const chunk of Deno.stdin.readable) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield line;
      prompt();
    }
  }
  if (buf.trim()) yield buf.trim();
}
