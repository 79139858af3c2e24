/**
 * `ingest.ts hook <host> [--url URL] [--capture ID]`: the light hook
 * forwarder (`<host>`: `claude-code`, `gemini-cli`, `opencode`, or the
 * seed's `host_a`, `host_b`, `host_c` that installs write). It reads the host's payload on stdin, posts it to the ingest
 * server, always exits 0 and prints only the host's neutral answer.
 *
 * @module
 */
import { grantedEnv as env } from "./env.ts";
import type { Io } from "./io.ts";
import {
  forwardHook,
  hostAnswer,
  optionsFromEnv,
  readAll,
} from "../forwarder/forward.ts";
import { hostByName } from "../trace/hosts.ts";

/** The variables the forwarder reads (and a command hook passes on). */
export const FORWARDER_ENV: readonly string[] = [
  "HARNESS_INGEST_URL",
  "HARNESS_CAPTURE_ID",
  "HARNESS_HOOK_TIMEOUT",
  "HARNESS_INGEST_TOKEN",
];

/**
 * Forward one hook payload; fail open.
 *
 * @param args The arguments after `hook` (the host first).
 * @param io Where the host's answer goes.
 * @returns 0, always.
 */
export async function hookCommand(args: string[], io: Io): Promise<number> {
  const word = args[0] ?? "";
  const host = hostByName(word)?.seed ?? word;
  const flag = (name: string) => {
    const at = args.indexOf(name);
    return at > 0 ? args[at + 1] : undefined;
  };
  try {
    const options = optionsFromEnv(env);
    // A stdin the host never closes must not hold the host up.
    const body = await readAll(
      Deno.stdin.readable,
      undefined,
      (options.timeoutMs ?? 1000) * 2,
    );
    const url = flag("--url");
    if (url && !env("HARNESS_INGEST_URL")) options.url = url;
    const capture = flag("--capture");
    if (capture) options.captureId = capture;
    await forwardHook(host, body, options);
  } catch {
    // Fail open: the host carries on whatever happened here.
  }
  const answer = hostAnswer(host);
  if (answer) io.out(answer.trimEnd());
  return 0;
}
