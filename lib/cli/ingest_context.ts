/**
 * {@linkcode IngestContext}: what every `ingest.ts` command is given — the
 * parsed command line, the store root, paths as the user meant them, and
 * the entry module's own URL (the hooks, the proxy and the daemon run it).
 *
 * @module
 */
import type { CommandLine, Options } from "./command.ts";
import type { Io } from "./io.ts";
import { grantedEnv as env } from "./env.ts";
import { resolveRoot, userPath } from "./root.ts";

/** Flags every `ingest.ts` command takes. */
export const INGEST_COMMON: Options = {
  root: { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
};

/** What an `ingest.ts` command is given. */
export interface IngestContext {
  /** The command line. */
  cl: CommandLine;
  /** The arguments as given (without the program). */
  args: string[];
  /** Where output goes. */
  io: Io;
  /** The store root: `--root`, else `HARNESS_ROOT`, else `./.harness`. */
  root: string;
  /** `--json`. */
  json: boolean;
  /** The URL of `ingest.ts` (hooks and the daemon run it; `proxy.ts` is beside it). */
  entry: string;
  /**
   * A path the user typed, as they meant it: under `deno task` the entry
   * runs in the checkout, and the path is their own folder's (`INIT_CWD`).
   *
   * @param path The path, if given.
   * @returns The path to use.
   */
  here(path: string | undefined): string | undefined;
}

/**
 * The context of one command line.
 *
 * @param cl The parsed command line.
 * @param o `args`: the arguments as given; `io`: where output goes;
 *   `entry`: the URL of `ingest.ts`.
 * @returns The context.
 */
export function ingestContext(
  cl: CommandLine,
  o: { args: string[]; io: Io; entry: string },
): IngestContext {
  const { args, io, entry } = o;
  return {
    cl,
    args,
    io,
    root: resolveRoot(cl.string("root"), env("HARNESS_ROOT"), env("INIT_CWD")),
    json: cl.flag("json"),
    entry,
    here: (path) =>
      path === undefined ? undefined : userPath(path, env("INIT_CWD")),
  };
}
