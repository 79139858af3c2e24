/**
 * A served package against an upstream stream that never ends (issue 44,
 * item 2), for `deno task bench reliability`: a real `ingest.ts serve`
 * process serves the retail agent-form package (compiled from the vendored
 * τ² slice) at `/p/retail`; agents on the package's route run its lookups
 * against the retail environment until the gateway asks the model, and the
 * model's answer is an event stream that never ends. Before the fix the
 * gateway kept every chunk to check the answer whole (+1,482 MB in 4 s, the
 * client without a byte). Now it reads at most its answer limit (16 MiB)
 * from the gateway's budget (128 MiB) and answers the API's error; the
 * row reports the server's peak memory above idle, what each agent got and
 * what `/health` holds after.
 *
 * @module
 */
import { join } from "node:path";
import { RetailEnv } from "../eval/envs/tau2/mod.ts";
import { servedRetail } from "../tests/model_gateway/_served_retail.ts";
import { RETAIL_CHAT_TOOLS } from "../tests/model_gateway/_retail_agent.ts";
import { RETAIL_INSTRUCTIONS } from "../tests/model_gateway/_served_retail.ts";
import { processMemory } from "./_otlp_hostile.ts";
import { startServeProcess } from "./_reliability.ts";

const ASK =
  "Hi, my email is sofia.li7352@example.com. Please cancel my pending order #W8855135, I no longer need it.";

/** Start a process's peak (`VmHWM`) afresh at its current RSS. */
async function resetPeak(pid: number): Promise<void> {
  await new Deno.Command("sh", {
    args: ["-c", `echo 5 > /proc/${pid}/clear_refs`],
    stderr: "null",
  }).output();
}

/** An upstream whose every answer is an event stream without end. */
function endlessUpstream(): {
  url: string;
  streams: () => number;
  close(): Promise<void>;
} {
  const piece = new TextEncoder().encode(`data: ${
    JSON.stringify({
      id: "endless",
      object: "chat.completion.chunk",
      model: "m",
      choices: [{ index: 0, delta: { content: "x".repeat(16_000) } }],
    })
  }\n\n`);
  let streams = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => {
      streams++;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(ctrl) {
            ctrl.enqueue(piece);
          },
        }, { highWaterMark: 0 }),
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    streams: () => streams,
    close: () => server.shutdown(),
  };
}

/** What one agent got once the gateway asked the model. */
interface AgentEnd {
  /** Answers the package made before. */
  served: number;
  /** The status of the first answer it did not make. */
  status: number;
  /** Whether that answer is the API's error shape. */
  error_shape: boolean;
}

/** One agent: the package's lookups, then the model's endless answer. */
async function agent(url: string, db: unknown): Promise<AgentEnd> {
  const env = new RetailEnv(db);
  const messages: Record<string, unknown>[] = [
    { role: "system", content: RETAIL_INSTRUCTIONS },
    { role: "user", content: ASK },
  ];
  for (let served = 0; served <= 20; served++) {
    const res = await fetch(`${url}/p/retail/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer sk-reliability-0000000000",
      },
      body: JSON.stringify({
        model: "gpt-agent",
        messages,
        tools: RETAIL_CHAT_TOOLS,
      }),
    });
    const text = await res.text();
    if (res.headers.get("x-harness-served") !== "package") {
      let shape = false;
      try {
        shape = typeof JSON.parse(text).error?.message === "string";
      } catch { /* not JSON */ }
      return { served, status: res.status, error_shape: shape };
    }
    const m = JSON.parse(text).choices[0].message;
    messages.push({
      role: "assistant",
      content: m.content,
      tool_calls: m.tool_calls,
    });
    for (const c of m.tool_calls ?? []) {
      messages.push({
        role: "tool",
        tool_call_id: c.id,
        content: env.respond(c.function.name, JSON.parse(c.function.arguments)),
      });
    }
  }
  throw new RangeError("the package answered 20 times in a row");
}

/** What the endless streams did. */
export interface PackageStreamReport {
  /** Agents at once. */
  agents: number;
  /** Statuses the agents got once the model was asked, by count. */
  statuses: Record<string, number>;
  /** Whether every such answer was the API's error shape. */
  error_shapes: boolean;
  /** Streams the upstream opened. */
  streams: number;
  /** Peak RSS above idle, in KiB. */
  peak_above_kib: number;
  /** `/health` after: bytes held, answers not relayed (`unchecked`). */
  kept_bytes: number;
  unchecked: number;
}

/**
 * `agents` agents at once on a served package whose model answers never
 * end.
 *
 * @param root An empty folder for the store and the package file.
 * @param agents How many at once.
 * @returns What it did.
 */
export async function packageEndlessStreams(
  root: string,
  agents = 16,
): Promise<PackageStreamReport> {
  const retail = servedRetail();
  const file = join(root, "retail.package.json");
  await Deno.writeTextFile(file, JSON.stringify(retail.pkg));
  const up = endlessUpstream();
  const { child, url } = await startServeProcess(root, {
    args: [
      "--upstream-openai",
      `${up.url}/v1`,
      "--package",
      `retail=${file}`,
    ],
  });
  try {
    for (let i = 0; i < 5; i++) await (await fetch(`${url}/health`)).text();
    const idleKib = (await processMemory(child.pid)).rss;
    await resetPeak(child.pid);
    const ends = await Promise.all(
      Array.from({ length: agents }, () => agent(url, retail.db)),
    );
    const { peak } = await processMemory(child.pid);
    let g: Record<string, unknown> = {};
    for (;;) {
      g = (await (await fetch(`${url}/health`)).json()).model_gateway ?? {};
      if (Number(g.queued ?? 0) === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const statuses: Record<string, number> = {};
    for (const e of ends) statuses[e.status] = (statuses[e.status] ?? 0) + 1;
    return {
      agents,
      statuses,
      error_shapes: ends.every((e) => e.error_shape),
      streams: up.streams(),
      peak_above_kib: peak - idleKib,
      kept_bytes: Number(g.kept_bytes ?? NaN),
      unchecked: Number(g.unchecked ?? 0),
    };
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await up.close();
  }
}

/**
 * The row.
 *
 * @param root An empty folder.
 * @returns The row.
 */
export async function packageEndlessStreamsRow(root: string): Promise<{
  name: string;
  value: string;
  target: string;
  met: string;
}> {
  const r = await packageEndlessStreams(root);
  const said = Object.entries(r.statuses).map(([s, n]) => `${n}× ${s}`)
    .join(", ");
  return {
    name:
      `served package (/p/retail): ${r.agents} agents at once whose model answers with an event stream that never ends`,
    value: `${said}${
      r.error_shapes ? ", each in the API's error shape" : ", NOT all errors"
    }; ${r.streams} upstream streams; peak RSS ${
      (r.peak_above_kib / 1024).toFixed(0)
    } MB above idle; after: ${r.kept_bytes} bytes held, ${r.unchecked} not relayed`,
    target:
      "every agent answered 502/503 in the API's shape, 0 bytes held after, peak < 384 MB above idle (main ec38c28: +1,482 MB in 4 s, no byte to the client)",
    met: r.error_shapes &&
        Object.keys(r.statuses).every((s) => s === "502" || s === "503") &&
        r.kept_bytes === 0 && r.peak_above_kib < 384 * 1024
      ? "yes"
      : "NO",
  };
}

if (import.meta.main) {
  const root = await Deno.makeTempDir({ prefix: "harness_pkgstream_" });
  try {
    console.log(await packageEndlessStreams(root));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
