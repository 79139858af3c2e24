/**
 * Where a gateway process's CPU goes, from its V8 CPU profile
 * (`deno run --cpu-prof`): the time under each phase of serving and of
 * recording an exchange, as a share of the process's busy time (samples
 * outside `(idle)`). A sample counts once per phase whose function is on its
 * stack, so phases that nest (recording holds the others) overlap.
 *
 * @module
 */
import type { BenchRow } from "./_table.ts";

/** A profile's call frame, as V8 writes it. */
interface CallFrame {
  functionName: string;
  url: string;
}

/** A profile node. */
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

/** The parts of a `.cpuprofile` read here. */
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A phase: its name and the frames that mark it. */
type Phase = [string, (f: CallFrame) => boolean];

const at = (f: CallFrame, name: string, file: string) =>
  f.functionName === name && f.url.endsWith(file);

/** The phases, serving first, then recording's parts and recording whole. */
const PHASES: Phase[] = [
  [
    "serve: the gateway's answer (headers, upstream fetch, body read)",
    (f) => at(f, "answer", "model_gateway/gateway.ts"),
  ],
  [
    "serve: … of which the active capture's lookup",
    (f) => at(f, "at", "model_gateway/active_capture_reading.ts"),
  ],
  [
    "serve: stream relay (the relay's pieces, read for the record)",
    (f) => at(f, "read", "model_gateway/stream_relay.ts"),
  ],
  [
    "serve: HTTP/1.1 listener, reading requests",
    (f) => /http1\/_(reader|request|head)\.ts$/.test(f.url),
  ],
  [
    "serve: HTTP/1.1 listener, writing answers",
    (f) =>
      (f.functionName === "#respond" && f.url.endsWith("http1/_server.ts")) ||
      at(f, "writeStreamedAnswer", "http1/_stream_answer.ts"),
  ],
  [
    "record: reading the exchange (JSON.parse, wire reader, message hashes)",
    (f) => at(f, "pendingExchange", "model_gateway/pending_exchange.ts"),
  ],
  [
    "record: building events (recorder)",
    (f) =>
      at(f, "exchangeEvents", "model_gateway/recorder.ts") ||
      at(f, "exchangeEventStream", "model_gateway/recorder.ts"),
  ],
  [
    "record: redaction (the store's sinks)",
    (f) => at(f, "redactPayload", "trace/redact.ts"),
  ],
  [
    "record: blobs (payload parts over the size rule)",
    (f) => at(f, "externalizePayload", "store/blob_refs.ts"),
  ],
  [
    "record: sealing (canonical JSON, sha256, chain)",
    (f) => at(f, "prepare", "trace/chain.ts"),
  ],
  [
    "record: spool append (one write)",
    (f) =>
      (f.functionName === "appendMany" || f.functionName === "append") &&
      f.url.endsWith("store/spool.ts"),
  ],
  [
    "record: index rows (buffered per event)",
    (f) => at(f, "onAppended", "store/_write_hooks.ts"),
  ],
  [
    "record: index flush (SQLite transaction, head receipts)",
    (f) => at(f, "flushIndex", "store/_index_feed.ts"),
  ],
  [
    "record: all (the recording queue and the index flush)",
    (f) =>
      at(f, "#drain", "model_gateway/record_queue.ts") ||
      at(f, "#run", "model_gateway/record_queue.ts") ||
      at(f, "flushIndex", "store/_index_feed.ts"),
  ],
  ["garbage collection", (f) => f.functionName === "(garbage collector)"],
];

/**
 * The phase table of one profile.
 *
 * @param profile The `.cpuprofile` JSON.
 * @param label What the process was (the rows' prefix).
 * @param requests Requests it answered (for µs per request), or 0.
 * @returns One row per phase, and the busy time.
 */
export function profilePhases(
  profile: CpuProfile,
  label: string,
  requests: number,
): BenchRow[] {
  const nodes = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    nodes.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
  const under = new Array<number>(PHASES.length).fill(0);
  let busy = 0;
  for (const [id, us] of self) {
    if (nodes.get(id)!.callFrame.functionName === "(idle)") continue;
    busy += us;
    const hit = new Set<number>();
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
      const frame = nodes.get(x)!.callFrame;
      PHASES.forEach(([, marks], i) => {
        if (!hit.has(i) && marks(frame)) {
          hit.add(i);
          under[i] += us;
        }
      });
    }
  }
  const perRequest = (us: number) =>
    requests > 0 ? `, ${Math.round(us / requests)} µs per request` : "";
  return [
    {
      name: `${label}: busy time under the profiler`,
      value: `${(busy / 1e6).toFixed(2)} s${perRequest(busy)}`,
    },
    ...PHASES.map(([name], i) => ({
      name: `${label}: ${name}`,
      value: `${(under[i] / busy * 100).toFixed(1)}%${perRequest(under[i])}`,
    })),
  ];
}

/**
 * The profile a process wrote into a directory (`CPU.<time>.<pid>.cpuprofile`).
 *
 * @param dir The `--cpu-prof-dir`.
 * @param pid The process.
 * @returns The parsed profile, or null when there is none.
 */
export async function readProfileOf(
  dir: string,
  pid: number,
): Promise<CpuProfile | null> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name.endsWith(`.${pid}.cpuprofile`)) {
      return JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`));
    }
  }
  return null;
}
