/**
 * `capture start|finish|outcome|summary|lineage|inspect`: the coordinator
 * from the command line. When an ingest server owns the store, writes go through it
 * (POST /ingest) and reads come from the spools, which readers may always
 * read.
 *
 * @module
 */
import { HarnessStore } from "../store/store.ts";
import { isStoreLocked, readLockOwner } from "../store/lock.ts";
import { CaptureCoordinator } from "../control/coordinator.ts";
import { serverCaughtUp } from "../control/server_caught_up.ts";
import { HttpTraceSink } from "../tool_gateway/event_sink.ts";
import { CaptureNotFoundError } from "../store/inspect.ts";
import { formatInspection } from "./format_capture.ts";
import { openForRead } from "./cmd_store.ts";
import { formatLineage } from "./format_lineage.ts";
import { type Io, UsageError } from "./io.ts";

/** Arguments of the capture control commands. */
export interface CaptureArgs {
  /** Sub-command. */
  command: string;
  /** Positional arguments after it. */
  rest: string[];
  /** Store root. */
  root: string;
  /** JSON output. */
  json: boolean;
  /** `--id`. */
  id?: string;
  /** `--label`. */
  label?: string;
  /** `--success`. */
  success?: boolean;
  /** `--failure`. */
  failure?: boolean;
  /** `--note`. */
  note?: string;
  /** Bearer token for the server. */
  token?: string;
}

/**
 * Run one capture control command.
 *
 * @param a Arguments.
 * @param io Output.
 * @returns Exit code.
 */
export async function captureControl(a: CaptureArgs, io: Io): Promise<number> {
  if (a.command === "inspect") return await inspectCommand(a, io);
  // The store root is owner-only, like everything in it.
  Deno.mkdirSync(a.root, { recursive: true, mode: 0o700 });
  const url = isStoreLocked(a.root) ? readLockOwner(a.root)?.url : undefined;
  let http: HttpTraceSink | null = null;
  const store = url
    ? new HarnessStore(a.root, { readOnly: true })
    : new HarnessStore(a.root, { role: "cli" });
  try {
    if (url) http = new HttpTraceSink(url, { token: a.token });
    const coord = new CaptureCoordinator(
      store,
      url
        ? {
          sinkFor: () => http!,
          caughtUp: () => serverCaughtUp(url, { token: a.token }),
        }
        : {},
    );
    return await runCaptureCommand(
      a,
      io,
      coord,
      (what) => confirmRecorded(http, url, what),
    );
  } finally {
    await http?.flush();
    store.close();
  }
}

/**
 * `capture inspect <id>`: the inspection with what a served package did per
 * episode. Read-only, whoever owns the store: beside a running server it
 * first lets the server record and index what it has answered.
 *
 * @param a Arguments.
 * @param io Output.
 * @returns 0 when the chain verifies, else 1.
 */
async function inspectCommand(a: CaptureArgs, io: Io): Promise<number> {
  const id = a.rest[0];
  if (id === undefined) {
    throw new UsageError("capture inspect needs a capture id");
  }
  if (!isDirectory(a.root)) throw new CaptureNotFoundError(id, a.root);
  const url = isStoreLocked(a.root) ? readLockOwner(a.root)?.url : undefined;
  if (url) await serverCaughtUp(url, { token: a.token });
  using store = openForRead(a.root);
  for (const f of store.findings) io.err(`harness: ${f.message}`);
  const inspection = await new CaptureCoordinator(store).inspect(id);
  io.out(
    a.json
      ? JSON.stringify(inspection, null, 2)
      : formatInspection(id, inspection),
  );
  return inspection.chain.ok ? 0 : 1;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Nothing is reported as recorded unless the server acknowledged it.
 *
 * @param http The server's sink, or null when the CLI owns the store.
 * @param url The server's URL (for the message).
 * @param what What was written.
 * @throws {Error} The server dropped the write.
 */
async function confirmRecorded(
  http: HttpTraceSink | null,
  url: string | undefined,
  what: string,
): Promise<void> {
  await http?.flush();
  if (http?.dropped) {
    throw new Error(
      `The ingest server at ${url} did not record ${what} (${
        http.lastError ?? "no answer"
      })${
        /401/.test(http.lastError ?? "")
          ? ": set HARNESS_INGEST_TOKEN to the server's token"
          : ""
      }`,
    );
  }
}

/**
 * The sub-command switch, over an open coordinator.
 *
 * @param a Arguments.
 * @param io Output.
 * @param coord The coordinator.
 * @param confirm Waits for the server to acknowledge a write.
 * @returns Exit code.
 */
async function runCaptureCommand(
  a: CaptureArgs,
  io: Io,
  coord: CaptureCoordinator,
  confirm: (what: string) => Promise<void>,
): Promise<number> {
  const out = (data: unknown, text: () => string) =>
    io.out(a.json ? JSON.stringify(data, null, 2) : text());
  const need = (n: number, what: string) => {
    if (a.rest.length < n) {
      throw new UsageError(`capture ${a.command} needs ${what}`);
    }
  };
  switch (a.command) {
    case "start": {
      const r = coord.startCapture({ id: a.id, label: a.label });
      await confirm("the capture start");
      out(r, () =>
        [
          `Started capture ${r.capture_id}${
            a.label ? ` (${a.label})` : ""
          }; hook events without a capture id now go to it.`,
          `export HARNESS_CAPTURE_ID=${r.capture_id}`,
        ].join("\n"));
      return 0;
    }
    case "finish": {
      need(1, "a capture id");
      const r = coord.finishCapture(a.rest[0]);
      await confirm("the capture finish");
      out(r, () => `Finished capture ${r.capture_id}`);
      return 0;
    }
    case "outcome": {
      need(2, "a capture id and an episode id");
      if (a.success === a.failure) {
        throw new UsageError(
          "capture outcome needs exactly one of --success and --failure",
        );
      }
      // An episode the capture does not hold is refused, nothing written;
      // one the server has answered but not yet recorded is waited for.
      const ev = await coord.recordOutcome(a.rest[0], a.rest[1], {
        success: a.success === true,
        ...(a.note !== undefined ? { note: a.note } : {}),
      });
      await confirm("the outcome");
      out(
        ev.payload,
        () =>
          `Recorded ${a.success ? "success" : "failure"} for episode ${
            a.rest[1]
          } of capture ${a.rest[0]}`,
      );
      return 0;
    }
    case "summary": {
      need(1, "a capture id");
      const s = await coord.summarize(a.rest[0]);
      out(s, () => summaryText(a.rest[0], s));
      return s.chain.ok ? 0 : 1;
    }
    case "lineage": {
      need(1, "a capture id");
      const r = await coord.lineageReport(a.rest[0]);
      out(r, () => formatLineage(r));
      return r.chain.ok ? 0 : 1;
    }
    default:
      throw new UsageError(`unknown command "capture ${a.command}"`);
  }
}

/**
 * The human form of `capture summary`: the inspection, then the outcomes.
 *
 * @param id Capture id.
 * @param s The summary.
 * @returns Text.
 */
function summaryText(
  id: string,
  s: Awaited<ReturnType<CaptureCoordinator["summarize"]>>,
): string {
  const outcomes = Object.entries(s.outcomes).map(([ep, o]) =>
    `  ${ep}: ${o.success ? "success" : "failure"}${
      o.outcome ? ` ${JSON.stringify(o.outcome)}` : ""
    }`
  );
  return [
    formatInspection(id, s),
    "",
    outcomes.length
      ? "outcomes:\n" + outcomes.join("\n")
      : "outcomes: none recorded",
  ].join("\n");
}
