/**
 * The MCP stdio proxy entry: put it in front of an MCP server and every call
 * an agent makes through it is recorded.
 *
 * ```sh
 * deno run --allow-run=npx --allow-read=.harness --allow-write=.harness --allow-env --allow-net=127.0.0.1 \
 *   proxy.ts --capture cap_1 --server everything -- npx -y @modelcontextprotocol/server-everything stdio
 * ```
 *
 * Permissions: `--allow-run=<upstream command>`, `--allow-read`/`--allow-write` of the store root,
 * `--allow-env` (the upstream gets the standard environment), `--allow-net=127.0.0.1` (to record
 * through a running ingest server when it owns the store). stdout carries protocol bytes only;
 * diagnostics go to stderr.
 *
 * @module
 */
import { grantedEnv } from "./lib/cli/env.ts";
import { parseArgs } from "node:util";
import { errorText } from "./lib/cli/help.ts";
import { closestWord } from "./lib/cli/did_you_mean.ts";
import { resolveRoot } from "./lib/cli/root.ts";
import { readActiveCapture } from "./lib/store/active_capture.ts";
import { openRecordingSink } from "./lib/tool_gateway/open_sink.ts";
import { DEFAULT_PROXY_EPISODE, serveProxy } from "./lib/proxy/mod.ts";
import { onShutdownSignals } from "./lib/proxy/shutdown_signals.ts";

/** The proxy as a library: `./proxy` (`lib/proxy/mod.ts`) exports the same. */
export * from "./lib/proxy/mod.ts";

const USAGE = `harness proxy: record every call to an upstream MCP server

Usage:
  proxy.ts [--capture ID] [--episode ID] [--server NAME] [--root DIR] [--timeout-ms N] [--json] -- <command> [args...]

  --capture     capture id (default: $HARNESS_CAPTURE_ID, else the store's active capture, else "default")
  --episode     episode id (default: ep_proxy)
  --server      the upstream's name, the namespace of its tools (default: upstream)
  --root        store root (default: $HARNESS_ROOT, else ./.harness)
  --timeout-ms  time-out of one upstream call (default: 60000); starting the upstream gets 60000 or this,
                whichever is longer
  --json        what it prints on stderr as JSON lines: {"status":"recording",…}, then {"status":"finished",…}
                (or {"ok":false,"error",…}); stdout is the MCP protocol's

When an ingest server owns the store, events go through it over loopback. A message over 10 MiB gets
a JSON-RPC error; closing stdin (or SIGTERM, SIGINT, SIGHUP) stops the upstream and exits 0.`;

const env = grantedEnv;

const FLAGS = ["capture", "episode", "server", "root", "timeout-ms", "json"];

/** An unknown flag with the flag it most likely meant. */
function flagError(message: string): string {
  const typed = /^Unknown option '(--?[^']+)'/.exec(message)?.[1];
  if (!typed) return message;
  const meant = closestWord(typed.replace(/^-+/, ""), FLAGS);
  return `unknown flag ${typed}${
    meant ? `: did you mean --${meant}?` : ""
  } (the upstream's own flags go after --)`;
}

/**
 * Run the proxy until its client disconnects.
 *
 * @param args Command-line arguments.
 * @returns Exit code.
 */
export async function main(args: string[]): Promise<number> {
  const dash = args.indexOf("--");
  const own = dash >= 0 ? args.slice(0, dash) : args;
  const upstreamCmd = dash >= 0 ? args.slice(dash + 1) : [];
  let values;
  try {
    values = parseArgs({
      args: own,
      options: {
        capture: { type: "string" },
        episode: { type: "string" },
        server: { type: "string" },
        root: { type: "string" },
        "timeout-ms": { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (err) {
    const message = flagError((err as Error).message);
    console.error(
      own.includes("--json")
        ? errorText(message, { exitCode: 2, json: true })
        : `harness proxy: ${message}\n\n${USAGE}`,
    );
    return 2;
  }
  const json = values.json === true;
  if (values.help || upstreamCmd.length === 0) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const root = resolveRoot(values.root, env("HARNESS_ROOT"));
  const captureId = values.capture ?? env("HARNESS_CAPTURE_ID") ??
    readActiveCapture(root) ?? "default";
  try {
    Deno.mkdirSync(root, { recursive: true });
    const sink = openRecordingSink(root, captureId, {
      role: "mcp-proxy",
      token: env("HARNESS_INGEST_TOKEN"),
    });
    console.error(
      json
        ? JSON.stringify({
          status: "recording",
          capture_id: captureId,
          via: sink.mode,
          target: sink.target,
        })
        : `harness proxy: recording capture "${captureId}" via ${sink.mode} (${sink.target})`,
    );
    const stop = new AbortController();
    try {
      using _signals = onShutdownSignals(() => stop.abort());
      const proxy = await serveProxy(
        {
          server: values.server ?? "upstream",
          command: upstreamCmd[0],
          args: upstreamCmd.slice(1),
        },
        {
          sink,
          captureId,
          episodeId: values.episode ?? DEFAULT_PROXY_EPISODE,
          callTimeoutMs: Number(values["timeout-ms"]) || undefined,
          stderr: "inherit",
          signal: stop.signal,
        },
      );
      const dropped = proxy.droppedEvents + sink.dropped;
      console.error(
        json
          ? JSON.stringify({
            status: "finished",
            capture_id: captureId,
            calls: proxy.calls,
            dropped_events: dropped,
          })
          : `harness proxy: ${proxy.calls} calls recorded, ${dropped} events dropped`,
      );
    } finally {
      await sink.close();
    }
    return 0;
  } catch (err) {
    console.error(
      errorText(`harness proxy: ${(err as Error).message}`, {
        exitCode: 1,
        json,
      }),
    );
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
