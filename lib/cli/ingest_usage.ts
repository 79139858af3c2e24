/**
 * The usage text of `ingest.ts`: `ingest.ts -h` prints it, and
 * `ingest.ts <command> -h` the lines of that command (`commandHelp`).
 *
 * @module
 */
import { DEFAULT_HOOK_TIMEOUT_MS } from "../forwarder/forward.ts";
import {
  upstreamEnv,
  upstreamFlag,
  UPSTREAMS,
} from "../model_gateway/wires/registry.ts";

/** Every command of `ingest.ts`, its flags, and the environment it reads. */
export const INGEST_USAGE: string =
  `harness ingest: capture, store and server commands

Usage:
  ingest.ts demo [--seed N]                  capture the order desk's episodes, report lineage, compile, run the
                                             package traced on a new instance (--seed N: another instance)
  ingest.ts serve [--host H] [--port P] [--detach] [--allow-remote] [--max-body-bytes N]
                  [--max-connections N (1024)] [--idle-timeout SECONDS (15)]
                  [--redact-rules FILE] [--no-redact] [--replicate postgres://…]
                  [--export-otlp URL [--protocol http/json|http/protobuf] [--headers K=V,…]
                   [--export-otlp-queue N]]   (spans per request and in memory; a remote collector needs --allow-net for its host)
${
    UPSTREAMS.map((u) =>
      `                  [--${upstreamFlag(u)} URL (${u.default})]`
    )
      .join("\n")
  }
                  [--upstream-timeout SECONDS (600)] [--no-model-gateway]
                  [--package FILE | --package NAME=FILE ... [--trust KEY|KEYFILE ...]]
                                             run the loopback ingest server (default 127.0.0.1:8848); it also
                                             speaks the model APIs (${
    UPSTREAMS.map((u) => u.title).join(", ")
  }): agents record through
                                             OPENAI_BASE_URL=http://127.0.0.1:8848/v1, ANTHROPIC_BASE_URL=http://127.0.0.1:8848;
                                             --package serves a compiled package there (agent or tree form; NAME=FILE
                                             at /p/NAME/v1), only signed by a --trust key when one is given
  ingest.ts status | stop [--json]           is a server running for this store (its active capture, the
                                             model gateway's counters, served packages; how to start one)
                                             / stop it
  ingest.ts hook <host> [--url URL]          forward one hook payload (stdin) to the server; always exits 0
                                             (what install writes into the host; host: claude-code, gemini-cli
                                             or opencode, or the seed's host_a, host_b, host_c)
  ingest.ts install <host> [--project DIR | --user] [--command] [--url URL] [--capture ID] [--gateway]
                                             host: claude-code, gemini-cli or opencode (or host_a, host_b, host_c);
                                             --gateway: the host's model calls go through
                                             the server, which records them (keep it running while the host is in use)
  ingest.ts doctor [--project DIR | --user] [--json]
                                             can the installed hooks record, does model traffic reach the
                                             gateway? (exit 1, and why, when not)
  ingest.ts uninstall <host> [--project DIR | --user] [--gateway]
                                             takes out the hooks and any model gateway settings install made
  ingest.ts install|uninstall <host> --proxy NAME [--project DIR | --user] [--capture ID]
                                             put the recording MCP proxy in front of the host's
                                             MCP server NAME (or take it out)
  ingest.ts capture start [--id ID] [--label TEXT]
                                             start a capture and make it the active one
  ingest.ts capture finish <id>              finish it
  ingest.ts capture outcome <id> <episode> --success|--failure [--note TEXT]
                                             record an episode's task outcome
  ingest.ts capture summary <id> [--json]    inspection plus recorded outcomes
  ingest.ts capture lineage <id> [--json]    the exact-lineage report
  ingest.ts mcp                              serve the control operations as an MCP server on stdio
  ingest.ts import --format openai-messages|tau-bench|tau2|otlp FILE --capture ID [--tools a,b,…]
                                             import existing trajectories or OTLP traces (JSON, or .pb protobuf)
                                             (all or nothing, once per file)
  ingest.ts report <id> --out FILE.html      a self-contained HTML report: timeline, call tree,
                                             lineage graph, tokens, what a served package did, chain status
  ingest.ts export <id> --endpoint URL | --out FILE.json|FILE.pb|- [--protocol http/json|http/protobuf] [--headers K=V,…] [--max-value-chars N]
                                             the capture as OpenTelemetry traces (GenAI conventions), sent to a
                                             collector or written to a file (--out -: JSON on stdout);
                                             "export otlp <id>" is the same
  ingest.ts capture list [--json]            list captures
  ingest.ts capture inspect <id> [--json]    episodes, counts by kind, fidelity, chain status, what a
                                             served package did
  ingest.ts capture verify <id> [--expect-head SEQ:HASH] [--json]
                                             check the hash chain and its head receipts (exit 1 when broken)
  ingest.ts capture delete <id>... [--force] [--json]
                                             delete captures: spool, index rows, receipts, and blobs no other
                                             capture uses (--force: the active one too); the server must be stopped
  ingest.ts store prune --older-than 30d [--dry-run] [--json]
                                             retention: delete every capture not written to for that long
                                             (s, min, h, d, w, mo = 30 days; a bare m is refused), but the
                                             active one
  ingest.ts store rebuild-index [--json]     rebuild harness.db from the spools
  ingest.ts store push --to postgres://…     ship every capture to the team database (once each)
  ingest.ts db migrate --db postgres://… [--json]
                                             create or migrate the team database's schema
  ingest.ts capture list|inspect|verify|lineage|summary [<id>] --db postgres://…
                                             the same, on the team database (id: STORE:CAPTURE)

Options:
  --root DIR   store root (default: $HARNESS_ROOT, else ./.harness)
  --json       machine-readable output
  -h, --help   this text

Environment: HARNESS_ROOT, HARNESS_INGEST_URL, HARNESS_CAPTURE_ID, HARNESS_HOOK_TIMEOUT (milliseconds,
default ${DEFAULT_HOOK_TIMEOUT_MS}), HARNESS_INGEST_TOKEN (required with --allow-remote), OTEL_EXPORTER_OTLP_HEADERS, ${
    UPSTREAMS.map(upstreamEnv).join(", ")
  } (the model gateway's upstreams: the serve task grants exactly these hosts).`;
