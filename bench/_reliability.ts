/**
 * Reliability checks shared by the test suite (small) and
 * `deno task bench reliability` (full size):
 *
 * - **kill -9 over HTTP**: a real `ingest.ts serve` process takes events
 *   from a client that counts acknowledgements, and is killed with SIGKILL
 *   at a random moment, again and again; after each kill the store must
 *   hold every acknowledged event exactly once, in a chain that verifies.
 * - **torn-tail sweep**: the last line of a spool is cut at every byte
 *   offset; opening the store must repair it (the torn bytes set aside),
 *   and the chain must verify with the events before it.
 * - **a database that never answers**: CLI calls and a replicating server
 *   against it must error or stop in time, losing nothing.
 *
 * Also `startServeProcess`, the serve process the other checks use. Hostile
 * OTLP requests are in `_otlp_hostile.ts`.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import { annotation } from "../lib/trace/mod.ts";
import { serveArgs } from "./_serve_args.ts";

const INGEST = new URL("../ingest.ts", import.meta.url).pathname;

/** Deterministic pseudo-random numbers. */
function* randoms(seed: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (x * 1103515245 + 12345) % 2147483648;
    yield x / 2147483648;
  }
}

/** What the kill -9 run found. */
export interface KillReport {
  /** Kills done. */
  kills: number;
  /** Events the server acknowledged in all. */
  acknowledged: number;
  /** Of those, missing from the store after the kills. */
  lost: number;
  /** Events stored more than once. */
  duplicated: number;
  /** Whether the chain verified after every kill. */
  chains_ok: boolean;
  /** Torn tails repaired on restart. */
  repaired: number;
}

/**
 * Start `ingest.ts serve` as its own process, with the serve task's narrow
 * permissions, on a free loopback port, and wait for its URL.
 *
 * @param root Store root.
 * @param options `ulimit`: the process's file-handle limit (`ulimit -n`);
 *   `args`: more serve flags.
 * @returns The process and its base URL.
 */
export async function startServeProcess(
  root: string,
  options: { ulimit?: number; args?: string[] } = {},
): Promise<{ child: Deno.ChildProcess; url: string }> {
  const args = serveArgs(root, { args: options.args });
  const child =
    (options.ulimit === undefined
      ? new Deno.Command(Deno.execPath(), {
        args,
        stdout: "piped",
        stderr: "piped",
      })
      : new Deno.Command("bash", {
        args: [
          "-c",
          `ulimit -n ${options.ulimit} && exec "$@"`,
          "bash",
          Deno.execPath(),
          ...args,
        ],
        stdout: "piped",
        stderr: "piped",
      })).spawn();
  const reader = child.stdout.getReader();
  let text = "";
  while (!/on (http:\/\/\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server did not start: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  child.stderr.cancel().catch(() => {});
  return { child, url: /on (http:\/\/\S+)/.exec(text)![1] };
}

/**
 * Kill the server with SIGKILL `kills` times while a client sends events.
 *
 * @param root An empty folder for the store.
 * @param kills How many kills.
 * @param seed Seed of the kill moments.
 * @returns What was found.
 */
export async function killOverHttp(
  root: string,
  kills: number,
  seed = 20261123,
): Promise<KillReport> {
  const r = randoms(seed);
  const acked = new Set<string>();
  let n = 0;
  let chainsOk = true;
  let repaired = 0;
  const ctx = {
    captureId: "crash_http",
    episodeId: "ep_1",
    source: { host: "harness", adapter: "kill-test", model: null },
  };
  for (let k = 0; k < kills; k++) {
    const { child, url } = await startServeProcess(root);
    const killAfter = 20 + Math.floor(r.next().value * 150);
    const deadline = Date.now() + killAfter;
    let killed = false;
    const killer = setTimeout(() => {
      killed = true;
      child.kill("SIGKILL");
    }, killAfter);
    while (!killed || Date.now() < deadline) {
      const id = `k${k}_${n++}`;
      const body = JSON.stringify([
        annotation(ctx, { type: "note", id }),
      ]);
      try {
        const res = await fetch(`${url}/ingest`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        const answer = await res.json();
        if (res.ok && answer.ok) acked.add(id);
      } catch {
        break; // the server is gone
      }
      if (killed) break;
    }
    clearTimeout(killer);
    if (!killed) child.kill("SIGKILL");
    await child.status;
    // Restart as the library would: repair, then check.
    using store = new HarnessStore(root);
    repaired += store.findings.filter((f) => f.kind === "torn_tail_repaired")
      .length;
    const report = await store.verifyCapture("crash_http");
    if (!report.ok) chainsOk = false;
  }
  using store = new HarnessStore(root, { readOnly: true });
  const seen = new Map<string, number>();
  for await (const ev of store.readEvents("crash_http")) {
    const id = String(ev.payload.id);
    seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  let lost = 0;
  for (const id of acked) if (!seen.has(id)) lost++;
  const duplicated = [...seen.values()].filter((c) => c > 1).length;
  return {
    kills,
    acknowledged: acked.size,
    lost,
    duplicated,
    chains_ok: chainsOk,
    repaired,
  };
}

/** What the torn-tail sweep found. */
export interface SweepReport {
  /** Offsets tried (every byte of the last line but its end). */
  offsets: number;
  /** Offsets after which the store opened, repaired and verified. */
  repaired_and_verified: number;
  /** Offsets where the torn bytes were set aside exactly. */
  set_aside_exactly: number;
}

/**
 * Cut the last line of a spool at every byte offset and reopen.
 *
 * @param root An empty folder.
 * @param lineBytes About how long the last line is.
 * @returns What was found.
 */
export async function tornTailSweep(
  root: string,
  lineBytes: number,
): Promise<SweepReport> {
  // Deterministic events, so the same lines can be written twice.
  let t = Date.parse("2026-01-01T00:00:00.000Z");
  let n = 0;
  const ctx = () => ({
    captureId: "torn",
    episodeId: "ep_1",
    source: { host: "harness", adapter: "sweep", model: null },
    now: () => new Date(t += 1),
    newId: () => `evt_torn_${++n}`,
  });
  const events = (c: ReturnType<typeof ctx>) => [
    ...[0, 1, 2].map((i) => annotation(c, { type: "note", i })),
    annotation(c, { type: "note", pad: "p".repeat(lineBytes) }),
  ];
  // The full fourth line, as a writer would have sealed it.
  const scratch = `${root}/scratch`;
  Deno.mkdirSync(scratch);
  {
    using store = new HarnessStore(scratch);
    const sink = store.sink("torn");
    for (const ev of events(ctx())) sink.emit(ev);
  }
  const full = Deno.readFileSync(`${scratch}/captures/torn.jsonl`);
  Deno.removeSync(scratch, { recursive: true });
  // The store under test acknowledged only the first three.
  t = Date.parse("2026-01-01T00:00:00.000Z");
  n = 0;
  {
    using store = new HarnessStore(root);
    const sink = store.sink("torn");
    for (const ev of events(ctx()).slice(0, 3)) sink.emit(ev);
  }
  const path = `${root}/captures/torn.jsonl`;
  const lastStart = full.lastIndexOf(10, full.length - 2) + 1;
  const report: SweepReport = {
    offsets: 0,
    repaired_and_verified: 0,
    set_aside_exactly: 0,
  };
  for (let cut = lastStart + 1; cut < full.length - 1; cut++) {
    report.offsets++;
    const torn = full.subarray(0, cut);
    Deno.writeFileSync(path, torn);
    // Anything set aside earlier is cleared so each offset is judged alone.
    for (const e of Deno.readDirSync(`${root}/captures`)) {
      if (e.name !== "torn.jsonl") {
        Deno.removeSync(`${root}/captures/${e.name}`);
      }
    }
    using store = new HarnessStore(root);
    const f = store.findings.find((x) => x.kind === "torn_tail_repaired");
    const spool = Deno.readFileSync(path);
    const verified = await store.verifyCapture("torn");
    const ok = f !== undefined && spool.length === lastStart &&
      verified.ok && verified.events === 3;
    if (ok) report.repaired_and_verified++;
    const aside = [...Deno.readDirSync(`${root}/captures`)].find((e) =>
      e.name !== "torn.jsonl" && e.isFile
    );
    if (aside) {
      const saved = Deno.readFileSync(`${root}/captures/${aside.name}`);
      const want = torn.subarray(lastStart);
      if (
        saved.length === want.length && saved.every((b, i) => b === want[i])
      ) report.set_aside_exactly++;
    }
  }
  return report;
}

/** What a database that never answers a query did to the CLI and the server. */
export interface StuckDbReport {
  /** Each CLI call against it: exit code, milliseconds, whether its message said what to do. */
  calls: { command: string; code: number; ms: number; says_why: boolean }[];
  /** Events the replicating server acknowledged meanwhile. */
  acknowledged: number;
  /** Of those, missing from the store after the server stopped. */
  lost: number;
  /** From `ingest.ts stop` to the server process's end, in ms. */
  stop_ms: number;
  /** Whether the server ended by itself (not killed by `stop` after 5 s). */
  stopped_itself: boolean;
  /** Events `/health` counted as waiting for the database before the stop. */
  lag_events: number;
}

/**
 * A database that completes the start-up and never answers a query
 * (`tests/team/_stuck_pg.ts`): `capture list --db`, `db migrate`,
 * `store push` and `compile --db` run as their own processes under the
 * tasks' narrow flags, then a server replicating to it takes events and is
 * stopped with `ingest.ts stop`.
 *
 * @param root An empty folder for the store.
 * @param events Events to send the replicating server.
 * @returns What was found.
 */
export async function stuckDatabase(
  root: string,
  events = 200,
): Promise<StuckDbReport> {
  const { startStuckPg } = await import("../tests/team/_stuck_pg.ts");
  using pg = startStuckPg();
  const compile = new URL("../compile.ts", import.meta.url).pathname;
  const flags = [
    "run",
    "--allow-read",
    `--allow-write=${root}`,
    `--allow-net=127.0.0.1`,
    "--allow-env=HARNESS_ROOT,HARNESS_DB_URL,PG*,HOME,USER",
  ];
  {
    using store = new HarnessStore(root);
    store.sink("c").emit(annotation({
      captureId: "c",
      episodeId: "ep_1",
      source: { host: "harness", adapter: "stuck-db", model: null },
    }, { type: "note" }));
  }
  const calls: StuckDbReport["calls"] = [];
  for (
    const [label, entry, args] of [
      ["capture list --db", INGEST, ["capture", "list", "--db", pg.url]],
      ["db migrate", INGEST, ["db", "migrate", "--db", pg.url]],
      ["store push", INGEST, ["store", "push", "--to", pg.url, "--root", root]],
      ["compile --db", compile, [
        "--db",
        pg.url,
        "--capture",
        "c",
        "--out",
        `${root}/out`,
      ]],
    ] as const
  ) {
    const t0 = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...flags, entry, ...args],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    calls.push({
      command: label,
      code: out.code,
      ms: Math.round(performance.now() - t0),
      says_why: /did not answer .* within/.test(err) &&
        /PostgreSQL is running/.test(err),
    });
  }
  const { child, url } = await startServeProcess(root, {
    args: ["--replicate", pg.url],
  });
  const acked = new Set<string>();
  const ctx = {
    captureId: "stuck_db",
    episodeId: "ep_1",
    source: { host: "harness", adapter: "stuck-db", model: null },
  };
  for (let i = 0; i < events; i++) {
    const id = `s${i}`;
    const res = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([annotation(ctx, { type: "note", id })]),
    });
    const answer = await res.json();
    if (res.ok && answer.ok) acked.add(id);
  }
  const health = await (await fetch(`${url}/health`)).json();
  const lag = Number(health.replication?.lag_events ?? 0);
  const t0 = performance.now();
  const stop = await new Deno.Command(Deno.execPath(), {
    args: [...flags, INGEST, "stop", "--root", root],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await child.status;
  const stopMs = Math.round(performance.now() - t0);
  const stopText = new TextDecoder().decode(stop.stdout);
  using store = new HarnessStore(root, { readOnly: true });
  const seen = new Set<string>();
  for await (const ev of store.readEvents("stuck_db")) {
    seen.add(String(ev.payload.id));
  }
  return {
    calls,
    acknowledged: acked.size,
    lost: [...acked].filter((id) => !seen.has(id)).length,
    stop_ms: stopMs,
    stopped_itself: stop.success && !/was killed/.test(stopText),
    lag_events: lag,
  };
}
