/**
 * Recording Claude Code's requests (issue 45, "fewer bytes sealed per
 * exchange"): the vendored model requests of its recorded sessions
 * (`fixtures/model_requests/host_a/<scenario>/`) posted in order through a
 * real `IngestServer`'s model gateway (temp store, recording on) to a local
 * upstream answering each as the model did, with no `x-harness-*` header.
 * Two arms in the same run, interleaved round by round: the gateway as it
 * ships (a request's long fields the previous request had the same are left
 * out, `body_same_as_previous`) and `wholeBodies: true` (each body recorded
 * whole but for its history, as before). Per request: the spool's bytes,
 * the blobs' bytes, and the process's CPU from the answer to the end of its
 * recording (`settled()`; client, server and upstream share the process,
 * and only the recording runs then). The first round of each arm warms up
 * and is not counted.
 *
 * `deno task bench bodies [--rounds N]` writes `bench/out/bodies.md`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { cpuUsage } from "node:process";
import { startServer } from "../tests/_server.ts";
import {
  postAsClaudeCode,
  recordedRequests,
  startRecordedUpstream,
} from "../tests/model_gateway/_claude_code.ts";

const SCENARIOS = ["basic", "compact", "subagent"];

/** One arm's figures over the counted rounds. */
interface Arm {
  /** Spool bytes per request, one figure per round. */
  spool: number[];
  /** Blob bytes per request, one figure per round. */
  blobs: number[];
  /** Recording CPU µs per request, one figure per round. */
  cpu: number[];
}

function dirBytes(path: string): number {
  let n = 0;
  try {
    for (const e of Deno.readDirSync(path)) {
      const p = join(path, e.name);
      n += e.isDirectory ? dirBytes(p) : Deno.statSync(p).size;
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return n;
}

async function round(scenario: string, wholeBodies: boolean): Promise<{
  spool: number;
  blobs: number;
  cpu: number;
}> {
  const bodies = recordedRequests(scenario);
  await using up = startRecordedUpstream(bodies);
  await using s = await startServer({
    modelGateway: { upstreamAnthropic: up.url, wholeBodies },
  });
  const gw = s.server.modelGateway!;
  let cpu = 0;
  for (const b of bodies) {
    const res = await postAsClaudeCode(s.url, b);
    const text = await res.text();
    if (res.status !== 200) {
      throw new Error(
        `${scenario}: the gateway answered ${res.status}: ${text}`,
      );
    }
    const u0 = cpuUsage();
    await gw.settled();
    const u = cpuUsage(u0);
    cpu += u.user + u.system;
  }
  const n = bodies.length;
  return {
    spool: Deno.statSync(join(s.root, "captures", "default.jsonl")).size / n,
    blobs: dirBytes(join(s.root, "blobs")) / n,
    cpu: cpu / n,
  };
}

function range(xs: number[], digits = 0): string {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted[Math.floor(sorted.length / 2)];
  return `${mid.toFixed(digits)} (${sorted[0].toFixed(digits)}–${
    sorted.at(-1)!.toFixed(digits)
  })`;
}

/**
 * Run the benchmark.
 *
 * @param args `--rounds N` (counted rounds per arm, 10 by default).
 */
export async function bodiesBench(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { rounds: { type: "string", default: "10" } },
  });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new RangeError(
      `--rounds takes a whole number of at least 1, not ${values.rounds}`,
    );
  }
  const lines = [
    "# Recording Claude Code's requests: long fields once, or every body whole",
    "",
    `Deno ${Deno.version.deno}. Claude Code's recorded model requests (fixtures/model_requests/host_a/), posted in order through the model gateway (recording on, temp store, no x-harness-* header) to a local upstream answering as the model did. Arms interleaved round by round; ${rounds} counted rounds each after one warm-up round. Per request, the median over the rounds (least–most): spool and blob bytes, and the process's CPU from the answer to the end of its recording. "whole" records each body whole but for its history (\`wholeBodies: true\`, as before); "once" leaves out the long fields the previous request had the same (\`body_same_as_previous\`).`,
    "",
    "| Scenario | Requests | Arm | Spool KiB/request | Blob KiB/request | Recording CPU µs/request |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const scenario of SCENARIOS) {
    const arms: Record<"whole" | "once", Arm> = {
      whole: { spool: [], blobs: [], cpu: [] },
      once: { spool: [], blobs: [], cpu: [] },
    };
    for (let r = 0; r <= rounds; r++) {
      const order: ("whole" | "once")[] = r % 2 === 0
        ? ["whole", "once"]
        : ["once", "whole"];
      for (const arm of order) {
        const got = await round(scenario, arm === "whole");
        if (r === 0) continue;
        arms[arm].spool.push(got.spool / 1024);
        arms[arm].blobs.push(got.blobs / 1024);
        arms[arm].cpu.push(got.cpu);
      }
    }
    const n = recordedRequests(scenario).length;
    for (const arm of ["whole", "once"] as const) {
      const a = arms[arm];
      lines.push(
        `| ${scenario} | ${n} | ${arm} | ${range(a.spool, 1)} | ${
          range(a.blobs, 1)
        } | ${range(a.cpu)} |`,
      );
    }
  }
  const text = lines.join("\n") + "\n";
  console.log(text);
  Deno.writeTextFileSync("bench/out/bodies.md", text);
}
