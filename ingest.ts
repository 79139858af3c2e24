/**
 * The harness control entry: the ingest server, the hook forwarder, the
 * installers, and the capture and store commands.
 *
 * Permissions, by command (the `deno task` entries carry them):
 * - store and capture commands, `demo`: `--allow-read=<root> --allow-write=<root> --allow-env=HARNESS_ROOT`
 *   (root `./.harness` unless `HARNESS_ROOT`/`--root` say otherwise)
 * - `serve`, `status`, `stop`: the above plus `--allow-net=127.0.0.1`
 *   (`serve --detach` also `--allow-run`, to start itself in the background)
 * - `hook <host>`: `--allow-read --allow-write=/tmp/harness-hook-state --allow-net=127.0.0.1 --allow-env=HARNESS_INGEST_URL,HARNESS_CAPTURE_ID,HARNESS_HOOK_TIMEOUT,HARNESS_INGEST_TOKEN`
 * - `install`, `uninstall`: `--allow-read --allow-write=<the host's config dir> --allow-env=HOME,XDG_CONFIG_HOME`
 *
 * ```sh
 * deno run --allow-read --allow-write=/tmp/harness-hook-state --allow-net=127.0.0.1 --allow-env=HARNESS_INGEST_URL,HARNESS_CAPTURE_ID,HARNESS_HOOK_TIMEOUT,HARNESS_INGEST_TOKEN ingest.ts hook host_a
 * ```
 *
 * @module
 */
import type { ServeOptions } from "./lib/cli/cmd_serve.ts";
import type { OtlpProtocol } from "./lib/otel/send.ts";
import { dbTarget, grantedEnv } from "./lib/cli/env.ts";
import { type Io, UsageError } from "./lib/cli/io.ts";
import {
  DEFAULT_HOOK_TIMEOUT_MS,
  DEFAULT_INGEST_URL,
  forwardHook,
  hostAnswer,
  optionsFromEnv,
  readAll,
} from "./lib/forwarder/forward.ts";

const USAGE = `harness ingest: capture, store and server commands

Usage:
  ingest.ts demo                             write a small capture, show its summary and chain check
  ingest.ts serve [--host H] [--port P] [--detach] [--allow-remote] [--max-body-bytes N]
                  [--max-connections N (256)] [--idle-timeout SECONDS (15)]
                  [--redact-rules FILE] [--no-redact] [--replicate postgres://…]
                  [--export-otlp URL [--protocol http/json|http/protobuf] [--headers K=V,…]
                   [--export-otlp-queue N]]   (spans per request and in memory; a remote collector needs --allow-net for its host)
                                             run the loopback ingest server (default 127.0.0.1:8848)
  ingest.ts status | stop                    is a server running for this store / stop it
  ingest.ts hook <host_a|host_b|host_c> [--url URL]
                                             forward one hook payload (stdin) to the server; always exits 0
  ingest.ts install <host> [--project DIR | --user] [--command] [--url URL] [--capture ID]
                                             host: host_a|claude-code, host_b|gemini-cli, host_c|opencode
  ingest.ts doctor [--project DIR | --user] [--json]
                                             can the installed hooks record? (exit 1, and why, when not)
  ingest.ts uninstall <host> [--project DIR | --user]
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
                                             import existing trajectories or OTLP JSON traces
                                             (all or nothing, once per file)
  ingest.ts report <id> --out FILE.html      a self-contained HTML report: timeline, call tree,
                                             lineage graph, tokens, chain status
  ingest.ts export otlp <id> [--endpoint URL | --out FILE.json|FILE.pb] [--protocol http/json|http/protobuf] [--headers K=V,…] [--max-value-chars N]
                                             the capture as OpenTelemetry traces (GenAI conventions)
  ingest.ts capture list [--json]            list captures
  ingest.ts capture inspect <id> [--json]    episodes, counts by kind, fidelity, chain status
  ingest.ts capture verify <id> [--expect-head SEQ:HASH] [--json]
                                             check the hash chain and its head receipts (exit 1 when broken)
  ingest.ts store rebuild-index [--json]     rebuild harness.db from the spools
  ingest.ts store push --to postgres://…     ship every capture to the team database (once each)
  ingest.ts db migrate --db postgres://…     create or migrate the team database's schema
  ingest.ts capture list|inspect|verify|lineage|summary [<id>] --db postgres://…
                                             the same, on the team database (id: STORE:CAPTURE)

Options:
  --root DIR   store root (default: $HARNESS_ROOT, else ./.harness)
  --json       machine-readable output
  -h, --help   this text

Environment: HARNESS_ROOT, HARNESS_INGEST_URL, HARNESS_CAPTURE_ID, HARNESS_HOOK_TIMEOUT (milliseconds,
default ${DEFAULT_HOOK_TIMEOUT_MS}), HARNESS_INGEST_TOKEN (required with --allow-remote), OTEL_EXPORTER_OTLP_HEADERS.`;

const FORWARDER_ENV = [
  "HARNESS_INGEST_URL",
  "HARNESS_CAPTURE_ID",
  "HARNESS_HOOK_TIMEOUT",
  "HARNESS_INGEST_TOKEN",
];

const env = grantedEnv;

/** The hosts' own names are accepted beside host_a|b|c. */
const HOST_NAMES: Record<string, string> = {
  "claude-code": "host_a",
  "claude": "host_a",
  "gemini-cli": "host_b",
  "gemini": "host_b",
  "opencode": "host_c",
};

function canonicalHost(name: string): string {
  return HOST_NAMES[name] ?? name;
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
  io: Io = { out: (t) => console.log(t), err: (t) => console.error(t) },
): Promise<number> {
  if (args[0] === "hook") return await hook(args.slice(1), io);
  const json = args.includes("--json");
  try {
    return await run(args, io);
  } catch (err) {
    const { errorText } = await import("./lib/cli/help.ts");
    if (err instanceof UsageError) {
      io.err(
        json
          ? errorText(err.message, 2, true)
          : `harness: ${err.message}\n\n${USAGE}`,
      );
      return 2;
    }
    let text = (err as Error).message ?? String(err);
    if (/^Requires write access/.test(text)) {
      const { WRITE_HINT } = await import("./lib/cli/cmd_store.ts");
      text = `${text.replace(/, run again with.*$/, "")}: ${WRITE_HINT}`;
    }
    io.err(errorText(`harness: ${text}`, 1, json));
    return 1;
  }
}

/** The forwarder: light imports, always exit 0, print only what the host expects. */
async function hook(args: string[], io: Io): Promise<number> {
  const host = args[0] ?? "";
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

async function parse(args: string[]) {
  const { parseArgs } = await import("node:util");
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        root: { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
        host: { type: "string" },
        port: { type: "string" },
        detach: { type: "boolean", default: false },
        log: { type: "string" },
        "allow-remote": { type: "boolean", default: false },
        "max-body-bytes": { type: "string" },
        "max-connections": { type: "string" },
        "idle-timeout": { type: "string" },
        "redact-rules": { type: "string" },
        "no-redact": { type: "boolean", default: false },
        project: { type: "string" },
        user: { type: "boolean", default: false },
        command: { type: "boolean", default: false },
        url: { type: "string" },
        capture: { type: "string" },
        id: { type: "string" },
        label: { type: "string" },
        success: { type: "boolean", default: false },
        failure: { type: "boolean", default: false },
        note: { type: "string" },
        format: { type: "string" },
        tools: { type: "string" },
        seed: { type: "string" },
        "expect-head": { type: "string" },
        db: { type: "string" },
        to: { type: "string" },
        replicate: { type: "string" },
        proxy: { type: "string" },
        endpoint: { type: "string" },
        out: { type: "string" },
        headers: { type: "string" },
        "max-value-chars": { type: "string" },
        protocol: { type: "string" },
        "export-otlp": { type: "string" },
        "export-otlp-queue": { type: "string" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function run(args: string[], io: Io): Promise<number> {
  const { values, positionals } = await parse(args);
  if (values.help || positionals.length === 0) {
    const { commandHelp } = await import("./lib/cli/help.ts");
    io.out(commandHelp(USAGE, "ingest.ts", positionals.slice(0, 2)));
    return 0;
  }
  const { resolveRoot, userPath } = await import("./lib/cli/root.ts");
  // Under `deno task` the entry runs in the checkout: a path the user typed
  // is their own folder's (INIT_CWD).
  const here = (path: string | undefined) =>
    path === undefined ? undefined : userPath(path, env("INIT_CWD"));
  const root = resolveRoot(values.root, env("HARNESS_ROOT"), env("INIT_CWD"));
  const [group, command, id] = positionals;
  switch (group) {
    case "root": {
      if (command === "grant") {
        // For the deno tasks: ",<dir>" of the store HARNESS_ROOT names.
        const { rootWriteGrant } = await import("./lib/cli/root.ts");
        io.out(rootWriteGrant(env));
        return 0;
      }
      throw new UsageError(`unknown command "root ${command ?? ""}"`);
    }
    case "demo": {
      const { demo } = await import("./examples/order_desk/demo.ts");
      return await demo(root, values.json, io, {
        seed: values.seed === undefined ? undefined : Number(values.seed),
      });
    }
    case "db": {
      if (command === "net") {
        // For the deno tasks: ",host:port" of the database the environment
        // names (HARNESS_DB_URL, PGHOST/PGPORT), or nothing.
        const { dbNetGrant } = await import("./lib/cli/cmd_team.ts");
        io.out(dbNetGrant(env));
        return 0;
      }
      const db = dbSpec(values.db, "--db");
      if (command !== "migrate" || db === undefined) {
        throw new UsageError(
          "db migrate needs --db postgres://… or --db env (HARNESS_DB_URL)",
        );
      }
      const { dbMigrate } = await import("./lib/cli/cmd_team.ts");
      return await dbMigrate(db, io);
    }
    case "capture":
    case "store": {
      if (group === "store" && command === "push") {
        const to = dbSpec(values.to, "--to");
        if (to === undefined) {
          throw new UsageError(
            "store push needs --to postgres://… or --to env (HARNESS_DB_URL)",
          );
        }
        const { storePush } = await import("./lib/cli/cmd_team.ts");
        return await storePush(root, to, values.json, io);
      }
      if (group === "capture" && values.db !== undefined) {
        const { captureFromDb } = await import("./lib/cli/cmd_team.ts");
        return await captureFromDb(
          command ?? "",
          id,
          dbSpec(values.db, "--db")!,
          values.json,
          io,
        );
      }
      if (
        group === "capture" && command &&
        ["start", "finish", "outcome", "summary", "lineage"].includes(command)
      ) {
        const { captureControl } = await import("./lib/cli/cmd_capture.ts");
        return await captureControl({
          command,
          rest: positionals.slice(2),
          root,
          json: values.json,
          id: values.id,
          label: values.label,
          success: values.success,
          failure: values.failure,
          note: values.note,
          token: env("HARNESS_INGEST_TOKEN"),
        }, io);
      }
      const m = await import("./lib/cli/cmd_store.ts");
      return await m.storeCommand(group, command, id, root, values.json, io, {
        token: env("HARNESS_INGEST_TOKEN"),
        expectHead: values["expect-head"],
      });
    }
    case "serve":
      return await serveCommand(args, values, root, io);
    case "import": {
      const { importCommand } = await import("./lib/cli/cmd_import.ts");
      return await importCommand({
        format: values.format,
        // Under `deno task`, a relative path is the user's folder's.
        file: here(command),
        capture: values.capture,
        tools: values.tools,
        root,
        json: values.json,
      }, io);
    }
    case "report": {
      const { reportCommand } = await import("./lib/cli/cmd_report.ts");
      return await reportCommand({
        capture: command,
        out: here(values.out),
        root,
        json: values.json,
      }, io);
    }
    case "export": {
      if (command !== "otlp") {
        throw new UsageError(
          "export takes otlp: export otlp <capture_id> [--endpoint URL | --out FILE.json]",
        );
      }
      const { exportOtlpCommand } = await import("./lib/cli/cmd_otel.ts");
      return await exportOtlpCommand({
        capture: id,
        root,
        endpoint: values.endpoint,
        out: here(values.out),
        headers: values.headers ?? env("OTEL_EXPORTER_OTLP_HEADERS"),
        maxValueChars: values["max-value-chars"],
        protocol: values.protocol,
        json: values.json,
      }, io);
    }
    case "mcp": {
      const { serveMcp } = await import("./lib/cli/cmd_mcp.ts");
      return await serveMcp(root, env("HARNESS_INGEST_TOKEN"), {
        out: io.err, // stdout is the protocol's
        err: io.err,
      });
    }
    case "status": {
      const { status } = await import("./lib/cli/cmd_status.ts");
      return await status(root, values.json, io);
    }
    case "stop": {
      const { stop } = await import("./lib/cli/cmd_status.ts");
      return await stop(root, io);
    }
    case "doctor": {
      const m = await import("./lib/cli/cmd_doctor.ts");
      const base = values.user
        ? env("HOME")
        : values.project ?? env("INIT_CWD") ?? ".";
      if (!base) throw new UsageError("--user needs HOME");
      return m.printFindings(
        await m.checkHooks(base, {
          user: values.user,
          xdgConfigHome: env("XDG_CONFIG_HOME"),
          token: env("HARNESS_INGEST_TOKEN"),
        }),
        values.json,
        io,
      );
    }
    case "install":
    case "uninstall": {
      if (!command) throw new UsageError(`${group} needs a host`);
      const m = await import("./lib/cli/cmd_install.ts");
      if (values.project && values.user) {
        throw new UsageError("use --project DIR or --user, not both");
      }
      const url = values.url ?? env("HARNESS_INGEST_URL") ?? DEFAULT_INGEST_URL;
      if (values.capture !== undefined) {
        const { validateId } = await import("./lib/trace/ids.ts");
        try {
          validateId("capture", values.capture);
        } catch (err) {
          throw new UsageError(
            `--capture ${JSON.stringify(values.capture)}: ${
              (err as Error).message
            }`,
          );
        }
      }
      const a = {
        host: canonicalHost(command),
        // Under `deno task`, "here" is the folder the user ran it from.
        project: values.project ?? (values.user ? undefined : env("INIT_CWD")),
        user: values.user,
        mode: values.command ? "command" as const : "http" as const,
        url,
        capture: values.capture,
        token: env("HARNESS_INGEST_TOKEN") !== undefined,
        forwarderCommand: await forwarderCommand(
          canonicalHost(command),
          url,
          DEFAULT_INGEST_URL,
          values.capture,
        ),
        home: env("HOME"),
        xdgConfigHome: env("XDG_CONFIG_HOME"),
      };
      if (values.proxy) {
        const proxyModule = new URL("./proxy.ts", import.meta.url);
        const { resolve } = await import("node:path");
        const storeRoot = resolve(root);
        return m.proxyEntry(
          {
            ...a,
            proxy: values.proxy,
            proxyCommand: {
              command: Deno.execPath(),
              args: [
                "run",
                "--quiet",
                "--no-prompt",
                "--allow-run",
                "--allow-read",
                `--allow-write=${storeRoot}`,
                "--allow-env",
                "--allow-net=127.0.0.1",
                proxyModule.protocol === "file:"
                  ? (await import("node:url")).fileURLToPath(proxyModule)
                  : proxyModule.href,
                "--server",
                values.proxy,
                ...(values.capture ? ["--capture", values.capture] : []),
                "--root",
                storeRoot,
                "--",
              ],
            },
          },
          group === "uninstall",
          io,
        );
      }
      return group === "install" ? m.install(a, io) : m.uninstall(a, io);
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(" ")}"`);
  }
}

/**
 * A database flag's value: an empty one is an error (never "the local
 * store"); absent, `db migrate` and `store push` use `HARNESS_DB_URL`.
 */
function dbSpec(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return env("HARNESS_DB_URL") ? "env" : undefined;
  if (!value.trim()) {
    throw new UsageError(
      `${flag} is empty: give postgres://user@host:port/db, or "env" to use HARNESS_DB_URL`,
    );
  }
  return value;
}

/** The command line a command hook runs (see `lib/installers/hook_command.ts`). */
async function forwarderCommand(
  host: string,
  url: string,
  defaultUrl: string,
  capture: string | undefined,
): Promise<string> {
  const { hookCommand, stableLauncher } = await import(
    "./lib/installers/hook_command.ts"
  );
  const { fileURLToPath } = await import("node:url");
  const mod = new URL(import.meta.url);
  return hookCommand({
    launcher: stableLauncher(),
    module: mod.protocol === "file:" ? fileURLToPath(mod) : mod.href,
    host,
    url,
    defaultUrl,
    capture,
    env: FORWARDER_ENV,
    answer: hostAnswer(host).trim(),
  });
}

async function serveCommand(
  args: string[],
  values: Awaited<ReturnType<typeof parse>>["values"],
  root: string,
  io: Io,
): Promise<number> {
  const { DEFAULT_HOST, DEFAULT_PORT } = await import("./lib/ingest/server.ts");
  const m = await import("./lib/cli/cmd_serve.ts");
  const host = values.host ?? DEFAULT_HOST;
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be a port number, not "${values.port}"`);
  }
  if (values.detach) {
    const passOn = args.slice(1).filter((a) => a !== "--detach");
    const exportHost = values["export-otlp"]
      ? m.parseExportUrl(values["export-otlp"]).host
      : null;
    const permissions = [
      `--allow-read=${root}`,
      `--allow-write=${root}`,
      `--allow-net=${host}${port ? `:${port}` : ""}${
        exportHost ? `,${exportHost}` : ""
      }`,
      "--allow-env=HARNESS_ROOT,HARNESS_INGEST_TOKEN,OTEL_EXPORTER_OTLP_HEADERS",
    ];
    if (values.replicate !== undefined) {
      // The database's host and port, its variables and ~/.pgpass.
      const t = await dbTarget(dbSpec(values.replicate, "--replicate")!);
      permissions[2] += `,${t.host}:${t.port}`;
      permissions[3] += ",HARNESS_DB_URL,PG*,HOME,USER";
      const pass = env("PGPASSFILE") ??
        (env("HOME") ? `${env("HOME")}/.pgpass` : undefined);
      if (pass) permissions[0] += `,${pass}`;
    }
    if (values["redact-rules"]) {
      permissions[0] += `,${values["redact-rules"]}`;
    }
    return await m.serveDetached(
      [...passOn, "--root", root],
      root,
      import.meta.url,
      permissions,
      io,
    );
  }
  const out = values.log ? fileIo(values.log) : io;
  let resolveStop!: () => void;
  const stopSignal = new Promise<void>((r) => resolveStop = r);
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, resolveStop);
  try {
    return await m.serve({
      root,
      host,
      port,
      allowRemote: values["allow-remote"],
      token: env("HARNESS_INGEST_TOKEN"),
      maxBodyBytes: wholeNumber(values, "max-body-bytes"),
      maxConnections: wholeNumber(values, "max-connections"),
      idleTimeoutMs: seconds(values, "idle-timeout"),
      redactRules: values["redact-rules"],
      noRedact: values["no-redact"],
      replicate: values.replicate === undefined
        ? undefined
        : await dbTarget(dbSpec(values.replicate, "--replicate")!, io.err),
      ...(await exportOptions(values)),
      stopSignal,
    }, out);
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, resolveStop);
  }
}

async function exportOptions(
  values: Awaited<ReturnType<typeof parse>>["values"],
): Promise<Partial<ServeOptions>> {
  const url = values["export-otlp"];
  if (!url) return {};
  const protocol = values.protocol ?? "http/json";
  if (protocol !== "http/json" && protocol !== "http/protobuf") {
    throw new UsageError(
      `--protocol takes http/json or http/protobuf, not "${protocol}"`,
    );
  }
  const queue = wholeNumber(values, "export-otlp-queue");
  const { parseHeaders } = await import("./lib/cli/cmd_otel.ts");
  return {
    exportOtlp: url,
    exportOtlpProtocol: protocol as OtlpProtocol,
    exportOtlpHeaders: parseHeaders(
      values.headers ?? env("OTEL_EXPORTER_OTLP_HEADERS"),
    ),
    exportOtlpQueue: queue,
  };
}

/** A flag's whole number ≥ 1, or undefined when not given. */
function wholeNumber(
  values: Record<string, unknown>,
  flag: string,
): number | undefined {
  return numberFlag(
    values,
    flag,
    "a whole number ≥ 1",
    (n) => Number.isInteger(n) && n >= 1,
  );
}

/** A flag's seconds (> 0, fractions allowed) in milliseconds. */
function seconds(
  values: Record<string, unknown>,
  flag: string,
): number | undefined {
  const s = numberFlag(values, flag, "seconds > 0", (n) => n > 0);
  return s === undefined ? undefined : Math.round(s * 1000);
}

function numberFlag(
  values: Record<string, unknown>,
  flag: string,
  what: string,
  ok: (n: number) => boolean,
): number | undefined {
  const raw = values[flag];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || !ok(n)) {
    throw new UsageError(`--${flag} takes ${what}, not "${raw}"`);
  }
  return n;
}

function fileIo(path: string): Io {
  const write = (t: string) =>
    Deno.writeTextFileSync(path, `${new Date().toISOString()} ${t}\n`, {
      append: true,
    });
  return { out: write, err: write };
}

if (import.meta.main) Deno.exit(await main(Deno.args));
