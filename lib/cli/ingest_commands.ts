/**
 * The commands of `ingest.ts`, by their first word: the flags each reads
 * and how it runs (each loads its module on use, so a command pays only for
 * its own imports). The help of each is its lines of
 * {@linkcode INGEST_USAGE}. `hook` is not here: the entry runs it before
 * any parsing (`cmd_hook.ts`), and `demo` is the entry's (it runs an
 * example).
 *
 * @module
 */
import type { CommandTable } from "./command.ts";
import type { IngestContext } from "./ingest_context.ts";
import { dbSpec, grantedEnv as env } from "./env.ts";
import { UsageError } from "./io.ts";
import { requireOutputAccess } from "./output_access.ts";
import { fileURLToPath } from "node:url";
import { INSTALL_OPTIONS, installCommand } from "./install_command_line.ts";
import { SERVE_OPTIONS, serveCommand } from "./serve_command_line.ts";

export { INGEST_USAGE } from "./ingest_usage.ts";

/** The commands of `ingest.ts` but `hook` and `demo`. */
export const INGEST_COMMANDS: CommandTable<IngestContext> = {
  root: {
    // For the deno tasks: ",<dir>" of the store HARNESS_ROOT names.
    options: {},
    run: async ({ cl, io }) => {
      if (cl.positionals[1] !== "grant") {
        throw new UsageError(
          `unknown command "root ${cl.positionals[1] ?? ""}"`,
        );
      }
      const { rootWriteGrant } = await import("./root.ts");
      io.out(rootWriteGrant(env));
      return 0;
    },
  },
  db: { options: { db: { type: "string" } }, run: db },
  gateway: { options: {}, run: gateway },
  capture: {
    options: {
      db: { type: "string" },
      id: { type: "string" },
      label: { type: "string" },
      success: { type: "boolean", default: false },
      failure: { type: "boolean", default: false },
      note: { type: "string" },
      "expect-head": { type: "string" },
      force: { type: "boolean", default: false },
    },
    run: capture,
  },
  store: {
    options: {
      to: { type: "string" },
      "expect-head": { type: "string" },
      "older-than": { type: "string" },
      "dry-run": { type: "boolean", default: false },
    },
    run: async (c) => {
      const [, command, id] = c.cl.positionals;
      if (command === "prune") {
        const { pruneCommand } = await import("./cmd_delete.ts");
        return pruneCommand({
          olderThan: c.cl.string("older-than"),
          root: c.root,
          dryRun: c.cl.flag("dry-run"),
          json: c.json,
          now: Date.now(),
        }, c.io);
      }
      if (command === "push") {
        const to = dbSpec(c.cl.string("to"), "--to");
        if (to === undefined) {
          throw new UsageError(
            "store push needs --to postgres://… or --to env (HARNESS_DB_URL)",
          );
        }
        const { storePush } = await import("./cmd_team.ts");
        return await storePush({ root: c.root, spec: to, json: c.json }, c.io);
      }
      return await storeCommand(c, "store", command, id);
    },
  },
  serve: { options: SERVE_OPTIONS, run: serveCommand },
  import: {
    options: {
      format: { type: "string" },
      capture: { type: "string" },
      tools: { type: "string" },
    },
    run: async (c) => {
      const { importCommand } = await import("./cmd_import.ts");
      return await importCommand({
        format: c.cl.string("format"),
        // Under `deno task`, a relative path is the user's folder's.
        file: c.here(c.cl.positionals[1]),
        capture: c.cl.string("capture"),
        tools: c.cl.string("tools"),
        root: c.root,
        token: env("HARNESS_INGEST_TOKEN"),
        json: c.json,
      }, c.io);
    },
  },
  report: {
    options: { out: { type: "string" } },
    run: async (c) => {
      const out = c.here(c.cl.string("out"));
      outputAccess(c, out, "report");
      const { reportCommand } = await import("./cmd_report.ts");
      return await reportCommand({
        capture: c.cl.positionals[1],
        out,
        root: c.root,
        json: c.json,
      }, c.io);
    },
  },
  export: {
    options: {
      endpoint: { type: "string" },
      out: { type: "string" },
      headers: { type: "string" },
      "max-value-chars": { type: "string" },
      protocol: { type: "string" },
    },
    run: exportOtlp,
  },
  mcp: {
    options: {},
    run: async (c) => {
      const { serveMcp } = await import("./cmd_mcp.ts");
      return await serveMcp({
        root: c.root,
        token: env("HARNESS_INGEST_TOKEN"),
      }, {
        out: c.io.err, // stdout is the protocol's
        err: c.io.err,
      });
    },
  },
  status: {
    options: {},
    run: async (c) =>
      await (await import("./cmd_status.ts")).status(
        { root: c.root, json: c.json },
        c.io,
      ),
  },
  stop: {
    options: {},
    run: async (c) =>
      await (await import("./cmd_status.ts")).stop(
        { root: c.root, json: c.json },
        c.io,
      ),
  },
  doctor: {
    options: {
      project: { type: "string" },
      user: { type: "boolean", default: false },
    },
    run: doctor,
  },
  install: { options: INSTALL_OPTIONS, run: installCommand },
  uninstall: { options: INSTALL_OPTIONS, run: installCommand },
};

async function gateway(c: IngestContext): Promise<number> {
  if (c.cl.positionals[1] !== "net") {
    throw new UsageError(
      "gateway net prints the network grant of the model gateway's upstreams (for the deno tasks)",
    );
  }
  const { upstreamNetGrant } = await import("./upstreams.ts");
  c.io.out(upstreamNetGrant(env));
  return 0;
}

async function db(c: IngestContext): Promise<number> {
  if (c.cl.positionals[1] === "net") {
    // For the deno tasks: ",host:port" of the database the environment
    // names (HARNESS_DB_URL, PGHOST/PGPORT), or nothing.
    const { dbNetGrant } = await import("./cmd_team.ts");
    c.io.out(dbNetGrant(env));
    return 0;
  }
  const spec = dbSpec(c.cl.string("db"), "--db");
  if (c.cl.positionals[1] !== "migrate" || spec === undefined) {
    throw new UsageError(
      "db migrate needs --db postgres://… or --db env (HARNESS_DB_URL)",
    );
  }
  const { dbMigrate } = await import("./cmd_team.ts");
  return await dbMigrate({ spec, json: c.json }, c.io);
}

/** The `capture` commands `cmd_capture.ts` runs (the others are `cmd_store.ts`'s). */
const CAPTURE_CONTROL = [
  "start",
  "finish",
  "outcome",
  "summary",
  "lineage",
  "inspect",
];

async function capture(c: IngestContext): Promise<number> {
  const { cl } = c;
  const [, command, id] = cl.positionals;
  if (cl.string("db") !== undefined) {
    const { captureFromDb } = await import("./cmd_team.ts");
    const spec = dbSpec(cl.string("db"), "--db")!;
    return await captureFromDb(
      { command: command ?? "", id, spec, json: c.json },
      c.io,
    );
  }
  if (command === "delete") {
    const { deleteCommand } = await import("./cmd_delete.ts");
    return deleteCommand({
      ids: cl.positionals.slice(2),
      root: c.root,
      force: cl.flag("force"),
      json: c.json,
    }, c.io);
  }
  if (command && CAPTURE_CONTROL.includes(command)) {
    const { captureControl } = await import("./cmd_capture.ts");
    return await captureControl({
      command,
      rest: cl.positionals.slice(2),
      root: c.root,
      json: c.json,
      id: cl.string("id"),
      label: cl.string("label"),
      success: cl.flag("success"),
      failure: cl.flag("failure"),
      note: cl.string("note"),
      token: env("HARNESS_INGEST_TOKEN"),
    }, c.io);
  }
  return await storeCommand(c, "capture", command, id);
}

/** `capture list|inspect|verify` and `store rebuild-index`. */
async function storeCommand(
  c: IngestContext,
  group: string,
  command: string | undefined,
  id: string | undefined,
): Promise<number> {
  const m = await import("./cmd_store.ts");
  return await m.storeCommand({
    group,
    command,
    id,
    root: c.root,
    json: c.json,
    token: env("HARNESS_INGEST_TOKEN"),
    expectHead: c.cl.string("expect-head"),
  }, c.io);
}

async function exportOtlp(c: IngestContext): Promise<number> {
  // `export <id>` (the task's form) or `export otlp <id>` (OTLP is the only format).
  const [, first, second] = c.cl.positionals;
  const id = first === "otlp" ? second : first;
  const target =
    "export <capture_id> --out FILE.json|FILE.pb|- or --endpoint URL";
  if (id === undefined) {
    throw new UsageError(`export needs a capture id: ${target}`);
  }
  const rawOut = c.cl.string("out");
  const endpoint = c.cl.string("endpoint");
  if (rawOut === undefined && endpoint === undefined) {
    // A capture's traces are megabytes of JSON: never to a terminal unasked.
    throw new UsageError(
      `export needs where to send capture "${id}": ${target} (--out - prints the JSON)`,
    );
  }
  const out = rawOut === "-" ? undefined : c.here(rawOut);
  outputAccess(c, out, "export");
  const { exportOtlpCommand } = await import("./cmd_otel.ts");
  return await exportOtlpCommand({
    capture: id,
    root: c.root,
    endpoint,
    out,
    headers: c.cl.string("headers") ?? env("OTEL_EXPORTER_OTLP_HEADERS"),
    maxValueChars: c.cl.string("max-value-chars"),
    protocol: c.cl.string("protocol"),
    json: c.json,
  }, c.io);
}

/** Refuse an `--out` this process may not write, before any work. */
function outputAccess(
  c: IngestContext,
  out: string | undefined,
  command: string,
): void {
  if (out === undefined) return;
  requireOutputAccess({
    path: out,
    task: command.split(" ")[0],
    granted: env("INIT_CWD"),
    rerun:
      `deno run --allow-read --allow-write={WRITE} --allow-env=HARNESS_ROOT ${
        fileURLToPath(c.entry)
      } ${command}`,
  });
}

async function doctor(c: IngestContext): Promise<number> {
  const m = await import("./cmd_doctor.ts");
  const user = c.cl.flag("user");
  const base = user ? env("HOME") : c.cl.string("project") ??
    env("INIT_CWD") ?? ".";
  if (!base) throw new UsageError("--user needs HOME");
  const findings = await m.checkHooks(base, {
    user,
    xdgConfigHome: env("XDG_CONFIG_HOME"),
    token: env("HARNESS_INGEST_TOKEN"),
  });
  return m.printFindings({ findings, json: c.json }, c.io);
}
