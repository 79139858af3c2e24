/**
 * `capture list|inspect|verify` and `store rebuild-index` (the demo is
 * `examples/order_desk/demo.ts`).
 *
 * @module
 */
import { HarnessStore } from "../store/store.ts";
import { isStoreLocked, readLockOwner } from "../store/lock.ts";
import type { CaptureInspection } from "../store/inspect.ts";
import type { CaptureRecord } from "../store/index_records.ts";
import { inspectCapture } from "../store/inspect.ts";
import {
  formatCaptureList,
  formatChain,
  formatInspection,
} from "./format_capture.ts";
import { type Io, UsageError } from "./io.ts";

function canWrite(root: string): boolean {
  return Deno.permissions.querySync({ name: "write", path: root }).state ===
    "granted";
}

/**
 * Open for reading: as the writer when possible (so torn tails are repaired
 * and the index catches up), else beside the writer, read-only.
 *
 * @param root Store root.
 * @returns The store.
 */
export function openForRead(root: string): HarnessStore {
  // Reading never changes the store's evidence: no repair, whatever access
  // we have. Only a store that has no index yet is opened as the writer,
  // to create it (and what that open repaired is in `findings`).
  try {
    return new HarnessStore(root, { readOnly: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound) || !canWrite(root)) throw err;
    return new HarnessStore(root, { role: "cli" });
  }
}

/**
 * What to do when a `deno task` may not write a store: the tasks grant
 * the checkout's `.harness` and the store `HARNESS_ROOT` names.
 */
export const WRITE_HINT =
  "the deno tasks write only the checkout's .harness and the store HARNESS_ROOT names: give the store as HARNESS_ROOT=DIR (not --root DIR)";

/**
 * Open as the writer, with a clear error when write access is missing.
 *
 * @param root Store root.
 * @returns The store.
 */
export function openForWrite(root: string): HarnessStore {
  if (!canWrite(root)) {
    throw new Deno.errors.NotCapable(
      `No write access to the store ${root}: ${WRITE_HINT}, or run with --allow-read=${root} --allow-write=${root}`,
    );
  }
  return new HarnessStore(root, { role: "cli" });
}

/**
 * The URL of the ingest server that owns this store right now, when we may
 * talk to it: read commands then go through it, so they see everything it
 * has acknowledged (its index is flushed before it answers).
 */
function liveServer(root: string): string | null {
  if (!isStoreLocked(root)) return null;
  const url = readLockOwner(root)?.url;
  if (!url) return null;
  try {
    const host = new URL(url).host;
    const state = Deno.permissions.querySync({ name: "net", host }).state;
    return state === "granted" ? url : null;
  } catch {
    return null;
  }
}

async function getJson<T>(url: string, token?: string): Promise<T> {
  const res = await fetch(url, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await res.text();
  let body: { error?: string } | null = null;
  try {
    body = JSON.parse(text);
  } catch { /* not JSON */ }
  if (!res.ok) {
    throw new Error(
      `${body?.error ?? `HTTP ${res.status} from ${url}`}${
        res.status === 401
          ? " (set HARNESS_INGEST_TOKEN to the server's token)"
          : ""
      }`,
    );
  }
  return body as T;
}

function storeExists(root: string): boolean {
  try {
    return Deno.statSync(root).isDirectory;
  } catch {
    return false;
  }
}

/**
 * `capture …` and `store …`.
 *
 * @param o `group`: `capture` or `store`; `command`: the sub-command;
 *   `id`: the capture id, where needed; `root`: the store root; `json`:
 *   JSON output; `token`: the server's bearer token; `expectHead`: a head
 *   (`SEQ:HASH`) `verify` checks against.
 * @param io Output.
 * @returns Exit code.
 */
export async function storeCommand(
  o: {
    group: string;
    command: string | undefined;
    id: string | undefined;
    root: string;
    json: boolean;
    token?: string;
    expectHead?: string;
  },
  io: Io,
): Promise<number> {
  const { group, command, id, root, json } = o;
  const options = { token: o.token, expectHead: o.expectHead };
  const print = (data: unknown, text: () => string) =>
    io.out(json ? JSON.stringify(data, null, 2) : text());
  if (group === "capture" && command === "list") {
    if (!storeExists(root)) {
      print([], () => `No store at ${root} yet.`);
      return 0;
    }
    const server = liveServer(root);
    let captures: CaptureRecord[];
    if (server) captures = await getJson(`${server}/captures`, options.token);
    else {
      using store = openForRead(root);
      for (const f of store.findings) io.err(`harness: ${f.message}`);
      captures = store.listCaptures();
    }
    print(captures, () => formatCaptureList(captures));
    return 0;
  }
  if (group === "capture" && (command === "inspect" || command === "verify")) {
    if (!id) throw new UsageError(`capture ${command} needs a capture id`);
    const server = command === "inspect" ? liveServer(root) : null;
    if (server) {
      const inspection = await getJson<CaptureInspection>(
        `${server}/capture/${encodeURIComponent(id)}/summary`,
        options.token,
      );
      print(inspection, () => formatInspection(id, inspection));
      return inspection.chain.ok ? 0 : 1;
    }
    using store = openForRead(root);
    for (const f of store.findings) io.err(`harness: ${f.message}`);
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
    const expectHead = parseExpectHead(options.expectHead);
    const report = await store.verifyCapture(id, { expectHead });
    print(report, () => formatChain(id, report));
    return report.ok ? 0 : 1;
  }
  if (group === "store" && command === "rebuild-index") {
    return rebuildIndex(root, print);
  }
  throw new UsageError(
    `unknown command "${[group, command].filter(Boolean).join(" ")}"`,
  );
}

/**
 * Parse `--expect-head`.
 *
 * @param text `SEQUENCE:sha256:<64 hex>`, or undefined.
 * @returns The expected head, or null when not given.
 * @throws {UsageError} Not in that form.
 */
function parseExpectHead(
  text: string | undefined,
): { sequence: number; hash: string } | null {
  if (text === undefined) return null;
  const m = /^(\d+):(sha256:[0-9a-f]{64})$/.exec(text);
  if (!m) {
    throw new UsageError(
      "--expect-head takes SEQUENCE:sha256:<64 hex>, as a receipt gives it",
    );
  }
  return { sequence: Number(m[1]), hash: m[2] };
}

/**
 * `store rebuild-index`.
 *
 * @param root Store root.
 * @param print Prints data as JSON or as the text.
 * @returns Exit code.
 */
function rebuildIndex(
  root: string,
  print: (data: unknown, text: () => string) => void,
): number {
  using store = openForWrite(root);
  // Opening as the writer repairs torn tails: say so.
  const repairs = store.findings.map((f) => f.message);
  const t0 = performance.now();
  const r = store.rebuildIndex();
  const ms = Math.round(performance.now() - t0);
  print(
    { ...r, ms, repairs },
    () =>
      [
        ...repairs.map((m) => `repaired: ${m}`),
        `Rebuilt the index of ${root}: ${r.captures} captures, ${r.events} events in ${ms} ms`,
      ].join("\n"),
  );
  return 0;
}
