/**
 * The harness control entry: the ingest server and the capture and store
 * commands.
 *
 * Permissions (the `ingest` and `demo` tasks): `--allow-read=.`
 * `--allow-write=.harness` (the store root; name yours when it is
 * elsewhere) `--allow-env=HARNESS_ROOT` and, to serve, `--allow-net=127.0.0.1`.
 *
 * ```sh
 * deno run --allow-read=. --allow-write=.harness --allow-env=HARNESS_ROOT ingest.ts capture list
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { HarnessStore } from "./lib/store/store.ts";
import { StoreLockedError } from "./lib/store/lock.ts";
import { inspectCapture } from "./lib/control/inspect.ts";
import { resolveRoot } from "./lib/cli/root.ts";
import {
  formatCaptureList,
  formatChain,
  formatInspection,
} from "./lib/cli/format_capture.ts";
import { writeDemoEpisode } from "./lib/cli/demo_capture.ts";

const USAGE = `harness ingest: capture and store commands

Usage:
  ingest.ts demo                          write a small capture, show its summary and chain check
  ingest.ts capture list [--json]         list captures
  ingest.ts capture inspect <id> [--json] episodes, counts by kind, fidelity, chain status
  ingest.ts capture verify <id> [--json]  check the hash chain (exit 1 when broken)
  ingest.ts store rebuild-index [--json]  rebuild harness.db from the spools

Options:
  --root DIR   store root (default: $HARNESS_ROOT, else ./.harness)
  --json       machine-readable output
  -h, --help   this text`;

/** A usage mistake: exit code 2. */
class UsageError extends Error {
  override name = "UsageError";
}

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

function envRoot(): string | undefined {
  const state = Deno.permissions.querySync({
    name: "env",
    variable: "HARNESS_ROOT",
  }).state;
  return state === "granted" ? Deno.env.get("HARNESS_ROOT") : undefined;
}

function canWrite(root: string): boolean {
  return Deno.permissions.querySync({ name: "write", path: root }).state ===
    "granted";
}

/** Open for reading: as the writer when possible (repairs, index catch-up), else beside the writer. */
function openForRead(root: string): HarnessStore {
  if (canWrite(root)) {
    try {
      return new HarnessStore(root, { role: "cli" });
    } catch (err) {
      if (!(err instanceof StoreLockedError)) throw err;
    }
  }
  return new HarnessStore(root, { readOnly: true });
}

function openForWrite(root: string): HarnessStore {
  if (!canWrite(root)) {
    throw new Deno.errors.NotCapable(
      `No write access to the store ${root}: run with --allow-read=${root} --allow-write=${root}`,
    );
  }
  return new HarnessStore(root, { role: "cli" });
}

function storeExists(root: string): boolean {
  try {
    return Deno.statSync(root).isDirectory;
  } catch {
    return false;
  }
}

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}

/**
 * Run one command line.
 *
 * @param args Command-line arguments (without the program).
 * @param io Where output goes.
 * @returns The exit code.
 */
export async function main(
  args: string[],
  io: Io = {
    out: (t) => console.log(t),
    err: (t) => console.error(t),
  },
): Promise<number> {
  try {
    return await run(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`harness: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`harness: ${(err as Error).message ?? err}`);
    return 1;
  }
}

async function run(args: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        root: { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    io.out(USAGE);
    return 0;
  }
  const root = resolveRoot(values.root, envRoot());
  const json = values.json;
  const [group, command, id] = positionals;
  const print = (data: unknown, text: () => string) =>
    io.out(json ? JSON.stringify(data, null, 2) : text());

  if (group === "demo") return await demo(root, json, io);
  if (group === "capture" && command === "list") {
    if (!storeExists(root)) {
      print([], () => `No store at ${root} yet.`);
      return 0;
    }
    using store = openForRead(root);
    const captures = store.listCaptures();
    print(captures, () => formatCaptureList(captures));
    return 0;
  }
  if (group === "capture" && (command === "inspect" || command === "verify")) {
    if (!id) throw new UsageError(`capture ${command} needs a capture id`);
    using store = openForRead(root);
    if (command === "inspect") {
      const inspection = await inspectCapture(store, id);
      print(inspection, () => formatInspection(id, inspection));
      return inspection.chain.ok ? 0 : 1;
    }
    if (!store.hasCapture(id)) {
      throw new Error(
        `Capture "${id}" not found in store ${root}: "capture list" shows the captures there`,
      );
    }
    const report = await store.verifyCapture(id);
    print(report, () => formatChain(id, report));
    return report.ok ? 0 : 1;
  }
  if (group === "store" && command === "rebuild-index") {
    using store = openForWrite(root);
    const t0 = performance.now();
    const r = store.rebuildIndex();
    const ms = Math.round(performance.now() - t0);
    print(
      { ...r, ms },
      () =>
        `Rebuilt the index of ${root}: ${r.captures} captures, ${r.events} events in ${ms} ms`,
    );
    return 0;
  }
  throw new UsageError(`unknown command "${positionals.join(" ")}"`);
}

async function demo(root: string, json: boolean, io: Io): Promise<number> {
  const captureId = `demo_${stamp(new Date())}`;
  let written: number;
  {
    using store = openForWrite(root);
    const sink = store.sink(captureId);
    written = writeDemoEpisode(sink, {
      captureId,
      episodeId: "ep_demo_1",
      source: { host: "harness", adapter: "demo", model: null },
    });
  }
  using store = openForRead(root);
  const inspection = await inspectCapture(store, captureId);
  if (json) {
    io.out(JSON.stringify(
      {
        capture_id: captureId,
        events_written: written,
        store: resolve(root),
        spool: resolve(store.spoolPath(captureId)),
        inspection,
      },
      null,
      2,
    ));
  } else {
    io.out(
      [
        `Wrote ${written} events to capture ${captureId}`,
        `  store  ${resolve(root)}`,
        `  spool  ${resolve(store.spoolPath(captureId))}`,
        "",
        formatInspection(captureId, inspection),
      ].join("\n"),
    );
  }
  return inspection.chain.ok ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
