/**
 * Write access to a file or folder the user named with `--out`, checked
 * before any work: the `deno task` entries grant only the folder they are
 * run from, and a user cannot add a flag to a task, so an output elsewhere
 * is refused at once with the two ways that work.
 *
 * @module
 */
/** Options of {@linkcode requireOutputAccess}. */
export interface OutputAccessOptions {
  /** The output path, as the command will write it (absolute under a task). */
  path: string;
  /** The command as the user types it after `deno task` (`report`, `compile`). */
  task: string;
  /** The folder the task grants (`INIT_CWD`), when run by a task. */
  granted?: string;
  /**
   * The command outside the task, with `{WRITE}` where its write grant
   * goes: `deno run --allow-read --allow-write={WRITE} …/ingest.ts report`.
   */
  rerun: string;
  /**
   * Ask on a terminal first (Deno's own prompt), as an unflagged `deno run`
   * would when writing.
   * @default true
   */
  prompt?: boolean;
}

/** An output the process may not write (exit 1, before any work). */
export class OutputAccessError extends Error {
  /** The output path. */
  readonly path: string;
  /**
   * @param path The output path.
   * @param message What failed and what to do.
   */
  constructor(path: string, message: string) {
    super(message);
    this.name = "OutputAccessError";
    this.path = path;
  }
}

/**
 * Make sure `path` may be written, or say how to make it so.
 *
 * @param o The path, the task's name, the folder it grants.
 * @throws {OutputAccessError} No write access to `path` (none granted, and
 *   no terminal to ask on, or the user said no).
 */
export function requireOutputAccess(o: OutputAccessOptions): void {
  const desc = { name: "write", path: o.path } as const;
  let state = Deno.permissions.querySync(desc).state;
  if (
    state === "prompt" && o.prompt !== false && Deno.stdin.isTerminal() &&
    Deno.stderr.isTerminal()
  ) {
    state = Deno.permissions.requestSync(desc).state;
  }
  if (state === "granted") return;
  const rerun = `${o.rerun.replaceAll("{WRITE}", o.path)} …`;
  throw new OutputAccessError(
    o.path,
    o.granted
      ? `Cannot write ${o.path}: \`deno task ${o.task}\` may write only under the folder it is run from (${o.granted}); give --out a path under that folder and move the file, or run: ${rerun}`
      : `Cannot write ${o.path}: this process has no write access there; run: ${rerun}`,
  );
}
