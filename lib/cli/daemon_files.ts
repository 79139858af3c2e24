/**
 * The running server's pid file `<root>/ingest.pid` (JSON, mode 0600) and
 * log `<root>/ingest.log`.
 *
 * @module
 */
import { join } from "node:path";

/** Contents of the pid file. */
export interface PidRecord {
  /** Server process id. */
  pid: number;
  /** Base URL it answers on. */
  url: string;
  /** Secret for `POST /admin/shutdown`. */
  admin_key: string;
  /** Store root. */
  root: string;
  /** When it started. */
  started_at: string;
}

/**
 * Path of the pid file.
 * @param root Store root.
 * @returns The path.
 */
export function pidPath(root: string): string {
  return join(root, "ingest.pid");
}

/**
 * Path of the daemon log.
 * @param root Store root.
 * @returns The path.
 */
export function logPath(root: string): string {
  return join(root, "ingest.log");
}

/**
 * Read the pid file.
 * @param root Store root.
 * @returns The record, or null when absent or unreadable.
 */
export function readPidFile(root: string): PidRecord | null {
  try {
    const v = JSON.parse(Deno.readTextFileSync(pidPath(root)));
    return typeof v?.pid === "number" && typeof v?.url === "string" ? v : null;
  } catch {
    return null;
  }
}

/**
 * Write the pid file (owner-only).
 * @param root Store root.
 * @param record What to write.
 */
export function writePidFile(root: string, record: PidRecord): void {
  Deno.writeTextFileSync(pidPath(root), JSON.stringify(record) + "\n", {
    mode: 0o600,
  });
}

/**
 * Remove the pid file if it is ours.
 * @param root Store root.
 * @param pid Our pid.
 */
export function removePidFile(root: string, pid: number): void {
  if (readPidFile(root)?.pid !== pid) return;
  try {
    Deno.removeSync(pidPath(root));
  } catch { /* already gone */ }
}

/**
 * Ask a server for its health, with a short time-out.
 * @param url Base URL.
 * @param timeoutMs Time-out.
 * @returns The health body, or null when it does not answer.
 */
export async function probeHealth(
  url: string,
  timeoutMs = 1000,
): Promise<Record<string, unknown> | null> {
  const ctl = new AbortController();
  const t = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    const res = await fetch(`${url}/health`, { signal: ctl.signal });
    if (res.status === 401) {
      // Alive, behind a token this caller does not have.
      await res.body?.cancel();
      return { ok: true, auth: "token required" };
    }
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    return await res.json();
  } catch {
    return null;
  } finally {
    clearTimeout(t);
  }
}
