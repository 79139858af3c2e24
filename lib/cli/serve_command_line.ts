/**
 * `ingest.ts serve`'s flags: checked and turned into {@linkcode ServeOptions}
 * for the server in this process, or into the permissions of a detached one
 * (`--detach`).
 *
 * @module
 */
import type { Options } from "./command.ts";
import type { IngestContext } from "./ingest_context.ts";
import type { ServeOptions } from "./cmd_serve.ts";
import type { OtlpProtocol } from "../otel/send.ts";
import { dbSpec, dbTarget, grantedEnv as env } from "./env.ts";
import { type Io, UsageError } from "./io.ts";
import type { CommandLine } from "./command.ts";
import {
  upstreamEnv,
  upstreamFlag,
  UPSTREAMS,
} from "../model_gateway/wires/registry.ts";

/** The flags of `serve`. */
export const SERVE_OPTIONS: Options = {
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
  replicate: { type: "string" },
  "export-otlp": { type: "string" },
  "export-otlp-queue": { type: "string" },
  protocol: { type: "string" },
  headers: { type: "string" },
  ...Object.fromEntries(
    UPSTREAMS.map((u) => [upstreamFlag(u), { type: "string" as const }]),
  ),
  "upstream-timeout": { type: "string" },
  "no-model-gateway": { type: "boolean", default: false },
  package: { type: "string", multiple: true },
  trust: { type: "string", multiple: true },
};

/**
 * Run `serve` from its command line: in this process until SIGINT or
 * SIGTERM, or detached (`--detach`).
 *
 * @param c The command's context.
 * @returns The exit code.
 * @throws {UsageError} For a bad flag value.
 */
export async function serveCommand(c: IngestContext): Promise<number> {
  const { DEFAULT_HOST, DEFAULT_PORT } = await import("../ingest/server.ts");
  const m = await import("./cmd_serve.ts");
  const cl = c.cl;
  const host = cl.string("host") ?? DEFAULT_HOST;
  const rawPort = cl.string("port");
  const port = rawPort === undefined ? DEFAULT_PORT : Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be a port number, not "${rawPort}"`);
  }
  if (cl.flag("detach")) {
    const passOn = c.args.slice(1).filter((a) => a !== "--detach");
    return await m.serveDetached({
      args: [...passOn, "--root", c.root],
      root: c.root,
      module: c.entry,
      permissions: await detachedPermissions(cl, c.root, host, port),
    }, c.io);
  }
  const log = cl.string("log");
  const out = log ? fileIo(log) : c.io;
  let resolveStop!: () => void;
  const stopSignal = new Promise<void>((r) => resolveStop = r);
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, resolveStop);
  const replicate = cl.string("replicate");
  try {
    return await m.serve({
      root: c.root,
      host,
      port,
      allowRemote: cl.flag("allow-remote"),
      token: env("HARNESS_INGEST_TOKEN"),
      maxBodyBytes: wholeNumber(cl, "max-body-bytes"),
      maxConnections: wholeNumber(cl, "max-connections"),
      idleTimeoutMs: seconds(cl, "idle-timeout"),
      redactRules: cl.string("redact-rules"),
      noRedact: cl.flag("no-redact"),
      replicate: replicate === undefined
        ? undefined
        : await dbTarget(dbSpec(replicate, "--replicate")!, c.io.err),
      ...(await exportOptions(cl)),
      modelGateway: await gatewayOptions(cl, host, port, c.io.err),
      stopSignal,
    }, out);
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, resolveStop);
  }
}

/** The narrow flags a detached server runs with. */
async function detachedPermissions(
  cl: CommandLine,
  root: string,
  host: string,
  port: number,
): Promise<string[]> {
  const { parseExportUrl } = await import("./cmd_serve.ts");
  const exportUrl = cl.string("export-otlp");
  const exportHost = exportUrl ? parseExportUrl(exportUrl).host : null;
  const permissions = [
    `--allow-read=${root}`,
    `--allow-write=${root}`,
    `--allow-net=${host}${port ? `:${port}` : ""}${
      exportHost ? `,${exportHost}` : ""
    }`,
    `--allow-env=HARNESS_ROOT,HARNESS_INGEST_TOKEN,OTEL_EXPORTER_OTLP_HEADERS,${
      UPSTREAMS.map(upstreamEnv).join(",")
    }`,
  ];
  if (!cl.flag("no-model-gateway")) {
    // Exactly the upstreams this server will forward to.
    const { parseUpstream } = await import("./upstreams.ts");
    for (const up of UPSTREAMS) {
      const flag = `--${upstreamFlag(up)}`;
      const given = cl.string(upstreamFlag(up)) ?? env(upstreamEnv(up));
      const u = parseUpstream(given ?? up.default, flag);
      permissions[2] += `,${u.hostname}:${
        u.port || (u.protocol === "https:" ? "443" : "80")
      }`;
    }
  }
  const replicate = cl.string("replicate");
  if (replicate !== undefined) {
    // The database's host and port, its variables and ~/.pgpass.
    const t = await dbTarget(dbSpec(replicate, "--replicate")!);
    permissions[2] += `,${t.host}:${t.port}`;
    permissions[3] += ",HARNESS_DB_URL,PG*,HOME,USER";
    const pass = env("PGPASSFILE") ??
      (env("HOME") ? `${env("HOME")}/.pgpass` : undefined);
    if (pass) permissions[0] += `,${pass}`;
  }
  const rules = cl.string("redact-rules");
  if (rules) permissions[0] += `,${rules}`;
  // The keys it trusts and the packages it serves (read once at start).
  for (const key of cl.strings("trust") ?? []) {
    if (!key.startsWith("ed25519:")) permissions[0] += `,${key}`;
  }
  for (const spec of cl.strings("package") ?? []) {
    const eq = spec.indexOf("=");
    const file = eq > 0 && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(
        spec.slice(0, eq),
      )
      ? spec.slice(eq + 1)
      : spec;
    permissions[0] += `,${file}`;
  }
  return permissions;
}

/** The model gateway's upstreams (`--upstream-<name>` …), or false with `--no-model-gateway`. */
async function gatewayOptions(
  cl: CommandLine,
  host: string,
  port: number,
  warn: (message: string) => void,
): Promise<ServeOptions["modelGateway"]> {
  if (cl.flag("no-model-gateway")) {
    if (cl.strings("package")?.length) {
      throw new UsageError(
        "--package serves a package through the model gateway: drop --no-model-gateway",
      );
    }
    return false;
  }
  const { upstreamOptions } = await import("./upstreams.ts");
  const { servedPackages } = await import("./served_packages.ts");
  const trust = cl.strings("trust") ?? [];
  if (trust.length && !cl.strings("package")?.length) {
    throw new UsageError(
      "--trust names the keys --package files must be signed by: give --package too",
    );
  }
  const { readTrustedKeys } = await import(
    "../package/package_signature.ts"
  );
  let trusted: string[];
  try {
    trusted = readTrustedKeys(trust, (p) => Deno.readTextFileSync(p));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const packages = await servedPackages(cl.strings("package") ?? [], trusted);
  const options = upstreamOptions({
    given: Object.fromEntries(
      UPSTREAMS.map((u) => [u.name, cl.string(upstreamFlag(u))]),
    ),
    timeoutMs: seconds(cl, "upstream-timeout"),
    env,
    warn,
  }, `${host}:${port}`);
  return Object.keys(packages).length ? { ...options, packages } : options;
}

async function exportOptions(cl: CommandLine): Promise<Partial<ServeOptions>> {
  const url = cl.string("export-otlp");
  if (!url) return {};
  const protocol = cl.string("protocol") ?? "http/json";
  if (protocol !== "http/json" && protocol !== "http/protobuf") {
    throw new UsageError(
      `--protocol takes http/json or http/protobuf, not "${protocol}"`,
    );
  }
  const queue = wholeNumber(cl, "export-otlp-queue");
  const { parseHeaders } = await import("./cmd_otel.ts");
  return {
    exportOtlp: url,
    exportOtlpProtocol: protocol as OtlpProtocol,
    exportOtlpHeaders: parseHeaders(
      cl.string("headers") ?? env("OTEL_EXPORTER_OTLP_HEADERS"),
    ),
    exportOtlpQueue: queue,
  };
}

/** A flag's whole number ≥ 1, or undefined when not given. */
function wholeNumber(cl: CommandLine, flag: string): number | undefined {
  return numberFlag(
    cl,
    flag,
    "a whole number ≥ 1",
    (n) => Number.isInteger(n) && n >= 1,
  );
}

/** A flag's seconds (> 0, fractions allowed) in milliseconds. */
function seconds(cl: CommandLine, flag: string): number | undefined {
  const s = numberFlag(cl, flag, "seconds > 0", (n) => n > 0);
  return s === undefined ? undefined : Math.round(s * 1000);
}

function numberFlag(
  cl: CommandLine,
  flag: string,
  what: string,
  ok: (n: number) => boolean,
): number | undefined {
  const raw = cl.string(flag);
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
