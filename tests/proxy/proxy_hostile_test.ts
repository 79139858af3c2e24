/**
 * The proxy under hostile conditions, as a real `proxy.ts` process speaking
 * line-delimited JSON-RPC on its stdin and stdout: the host closing stdin
 * (the proxy must stop its upstream, release the store and exit 0),
 * messages over the size limit in either direction (a JSON-RPC error naming
 * the limit; the upstream keeps its state), and an upstream that answers
 * something that is not JSON-RPC (said at once, not after the time-out).
 *
 * No assertion here is on a wall clock: each waits on the condition (an
 * answer, an exit) guarded by `tests/_wait.ts` (a minute, which only keeps
 * a broken proxy from hanging the suite), and "at once" is asserted by what
 * the answer says (the reason, not "did not answer within", the call
 * time-out's words).
 */
import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { StdioTransport } from "../../lib/proxy/stdio_transport.ts";
import { tempDir } from "../_helpers.ts";
import { cacheEverything, EVERYTHING } from "./_upstreams.ts";
import { GARBAGE } from "./_hostile_server.ts";
import { guarded, hangGuard } from "../_wait.ts";

const PROXY = new URL("../../proxy.ts", import.meta.url).pathname;
const HOSTILE = new URL("./_hostile_server.ts", import.meta.url).pathname;
const MIB = 1024 * 1024;

/** A JSON-RPC message as read from the proxy. */
type Message = {
  id?: number | string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/**
 * A host of our own: spawns `proxy.ts`, writes requests as lines and reads
 * answers, and can close the proxy's stdin on its own (what an MCP host does
 * first when it shuts a server down).
 */
class ProxyProcess {
  readonly child: Deno.ChildProcess;
  readonly stderr: Promise<string>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #waiting = new Map<
    number | string,
    { resolve: (m: Message) => void; reject: (e: Error) => void }
  >();
  readonly #reading: Promise<void>;
  #nextId = 1;

  constructor(root: string, upstream: string[], flags: string[] = []) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-run",
        "--allow-read",
        `--allow-write=${root}`,
        "--allow-env",
        "--allow-net=127.0.0.1",
        PROXY,
        "--capture",
        "cap_hostile",
        "--server",
        "hostile",
        "--root",
        root,
        ...flags,
        "--",
        ...upstream,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.stderr = new Response(this.child.stderr).text();
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of this.child.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const m = JSON.parse(line) as Message;
        if (m.id !== undefined) this.#waiting.get(m.id)?.resolve(m);
      }
    }
    for (const w of this.#waiting.values()) {
      w.reject(new Error("The proxy closed its stdout"));
    }
  }

  /** Write one raw line. */
  async writeLine(line: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(line + "\n"));
  }

  /** Send a request and wait for its answer (guarded against a hang). */
  async request(
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<Message> {
    const id = this.#nextId++;
    const answer = new Promise<Message>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    answer.catch(() => {}); // awaited below unless the write fails first
    try {
      await this.writeLine(
        JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      );
      return await guarded(`an answer to ${method}`, answer);
    } finally {
      this.#waiting.delete(id);
    }
  }

  /** Initialize as a host does. */
  async initialize(): Promise<void> {
    const init = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "hostile-test", version: "0" },
    });
    assertOk(init.result, JSON.stringify(init));
    await this.writeLine(
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    );
  }

  /** Call one tool. */
  async call(name: string, args: Record<string, unknown> = {}) {
    return await this.request("tools/call", { name, arguments: args });
  }

  /** Close the proxy's stdin. */
  async closeStdin(): Promise<void> {
    await this.#writer.close();
  }

  /** The exit code (a proxy that never exits is killed by the guard: 137). */
  async exit(): Promise<number> {
    using _guard = hangGuard(this.child);
    return (await this.child.status).code;
  }

  /** Kill what is left and wait for the streams. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch { /* already gone */ }
    await this.#writer.close().catch(() => {});
    await this.child.status;
    await this.#reading.catch(() => {});
    await this.stderr.catch(() => {});
  }
}

/**
 * Whether a process runs (a zombie does not), from `ps` (/proc/PID needs
 * -A under Deno's permissions).
 */
async function alive(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
    stdout: "piped",
  }).output();
  const state = new TextDecoder().decode(out.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

/** The pids among `pids` that still run. */
async function running(pids: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const pid of pids) if (await alive(pid)) out.push(pid);
  return out;
}

/** The pids of a process's children (`ps`; listing /proc needs -A). */
async function childrenOf(pid: number): Promise<number[]> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "pid=", "--ppid", String(pid)],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split(/\s+/).filter(Boolean)
    .map(Number);
}

/** Kill the pids that still run (a failing test must not leave them). */
async function killAll(pids: number[]): Promise<void> {
  for (const pid of await running(pids)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone meanwhile */ }
  }
}

/** Whether a new writer can open the store (the proxy released its lock). */
function writerOpens(root: string): string | true {
  try {
    new HarnessStore(root).close();
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}

const hostile = [Deno.execPath(), "run", "--quiet", "-A", HOSTILE];

async function closesCleanly(upstream: string[], callFirst?: string) {
  await using dir = await tempDir();
  await using proxy = new ProxyProcess(dir.path, upstream);
  await proxy.initialize();
  if (callFirst) {
    const r = await proxy.call(callFirst);
    assertOk(r.result && !r.result.isError, JSON.stringify(r));
  }
  const upstreams = await childrenOf(proxy.child.pid);
  assertEquals(upstreams.length, 1, "one upstream process");
  assertEquals(await running(upstreams), upstreams, "it runs");
  try {
    await proxy.closeStdin();
    assertEquals(await proxy.exit(), 0, "exit code after stdin EOF");
    assertEquals(await running(upstreams), [], "the upstream is stopped");
    assertEquals(writerOpens(dir.path), true, "the store lock is released");
    assertMatch(await proxy.stderr, /calls recorded/);
  } finally {
    await killAll(upstreams);
  }
}

Deno.test({
  name:
    "proxy.ts exits 0 when its host closes stdin, stops its upstream and releases the store",
  async fn() {
    await closesCleanly(hostile, "hostile__count");
  },
});

Deno.test({
  name:
    "proxy.ts in front of server-everything exits 0 on stdin EOF and leaves no upstream behind",
  async fn() {
    await cacheEverything();
    await closesCleanly([
      Deno.execPath(),
      "run",
      "--quiet",
      "-A",
      EVERYTHING,
      "stdio",
    ]);
  },
});

Deno.test({
  name:
    "proxy.ts exits 0 when its host closes stdin while the upstream is still starting (never answers), and stops it",
  async fn() {
    await using dir = await tempDir();
    // It would exit on its own only after the test's patience.
    await using proxy = new ProxyProcess(dir.path, ["sleep", "600"]);
    await proxy.initialize(); // answered before the upstream is ready
    const upstreams = await childrenOf(proxy.child.pid);
    try {
      assertEquals(upstreams.length, 1);
      await proxy.closeStdin();
      assertEquals(await proxy.exit(), 0);
      assertEquals(await running(upstreams), [], "the upstream is stopped");
      assertEquals(writerOpens(dir.path), true);
    } finally {
      await killAll(upstreams);
    }
  },
});

Deno.test({
  name:
    "proxy.ts stops its upstream and exits when it gets SIGTERM from its host",
  async fn() {
    await using dir = await tempDir();
    await using proxy = new ProxyProcess(dir.path, hostile);
    await proxy.initialize();
    const upstreams = await childrenOf(proxy.child.pid);
    try {
      proxy.child.kill("SIGTERM");
      assertEquals(await proxy.exit(), 0, "a clean exit");
      assertEquals(await running(upstreams), []);
      assertEquals(writerOpens(dir.path), true);
    } finally {
      await killAll(upstreams);
    }
  },
});

Deno.test({
  name:
    "proxy.ts answers an upstream result over 10 MiB with a JSON-RPC error naming the limit, at once, and keeps the upstream and its state",
  async fn() {
    await using dir = await tempDir();
    await using proxy = new ProxyProcess(dir.path, hostile);
    const upstreams: number[] = [];
    try {
      await proxy.initialize();
      upstreams.push(...(await childrenOf(proxy.child.pid)));
      const first = await proxy.call("hostile__count");
      const text = (r: Message) =>
        (r.result?.content as { text: string }[])[0].text;
      const pid = text(first).split("pid=")[1];
      assertMatch(text(first), /^count=1 /);

      const half = await proxy.call("hostile__big", { bytes: 5 * MIB });
      assertEquals(text(half).length, 5 * MIB);

      // At once: the error names the limit (after the call time-out it
      // would say "did not answer").
      const big = await proxy.call("hostile__big", { bytes: 11 * MIB });
      assertOk(big.error, JSON.stringify(big).slice(0, 300));
      assertMatch(big.error.message, /10485760 bytes \(10 MiB\)/);
      assertMatch(big.error.message, /hostile/);

      const after = await proxy.call("hostile__count");
      assertEquals(
        text(after),
        `count=2 pid=${pid}`,
        "same process, same state",
      );
    } finally {
      await proxy.closeStdin();
      await proxy.exit();
      await killAll(upstreams);
    }
    const store = new HarnessStore(dir.path, { readOnly: true });
    try {
      const evs = await Array.fromAsync(store.readEvents("cap_hostile"));
      const failed = evs.filter((e) => e.kind === "tool.call.failed");
      assertEquals(failed.length, 1, "the refused answer is a failed call");
      assertMatch(JSON.stringify(failed[0].payload), /10485760/);
    } finally {
      store.close();
    }
  },
});

Deno.test({
  name:
    "proxy.ts answers a host request over 10 MiB with a JSON-RPC error naming the limit and stays up",
  async fn() {
    await using dir = await tempDir();
    await using proxy = new ProxyProcess(dir.path, hostile);
    const upstreams: number[] = [];
    try {
      await proxy.initialize();
      upstreams.push(...(await childrenOf(proxy.child.pid)));
      const refused = await proxy.call("hostile__count", {
        pad: "y".repeat(11 * MIB),
      });
      assertOk(refused.error, JSON.stringify(refused).slice(0, 300));
      assertEquals(refused.error.code, -32600);
      assertMatch(refused.error.message, /10485760 bytes \(10 MiB\)/);
      const after = await proxy.call("hostile__count");
      assertMatch(
        (after.result?.content as { text: string }[])[0].text,
        /^count=1 /,
        "the refused request never reached the upstream",
      );
    } finally {
      await proxy.closeStdin();
      assertEquals(await proxy.exit(), 0);
      await killAll(upstreams);
    }
  },
});

Deno.test({
  name:
    "proxy.ts says what an upstream answered that is not JSON-RPC, not that it timed out; a stray log line before an answer is no failure",
  async fn() {
    await using dir = await tempDir();
    await using proxy = new ProxyProcess(dir.path, hostile);
    const upstreams: number[] = [];
    try {
      await proxy.initialize();
      upstreams.push(...(await childrenOf(proxy.child.pid)));
      const junk = await proxy.call("hostile__garbage");
      assertEquals(junk.result?.isError, true, JSON.stringify(junk));
      const said = JSON.stringify(junk.result?.content);
      assertOk(said.includes(GARBAGE), said);
      assertOk(!/did not answer/.test(said), said);
      // A stray log line followed by the answer is no failure.
      const noisy = await proxy.call("hostile__noisy");
      assertEquals(noisy.result?.content, [{ type: "text", text: "fine" }]);
      const after = await proxy.call("hostile__count");
      assertMatch(
        (after.result?.content as { text: string }[])[0].text,
        /^count=1 /,
      );
    } finally {
      await proxy.closeStdin();
      await proxy.exit();
      await killAll(upstreams);
    }
  },
});

Deno.test({
  name:
    "proxy.ts fails at start-up at once, quoting the upstream, when the upstream is not an MCP server",
  async fn() {
    await using dir = await tempDir();
    await using proxy = new ProxyProcess(dir.path, [
      ...hostile,
      "--garbage-only",
    ]);
    assertEquals(await proxy.exit(), 1);
    const err = await proxy.stderr;
    assertOk(err.includes(GARBAGE), err);
    assertOk(!/did not answer|timed out/.test(err), err);
    assertEquals(writerOpens(dir.path), true);
  },
});

Deno.test("StdioTransport answers a request over the limit by its id, wherever the id stands, and reads on until its input ends", async () => {
  const pad = "y".repeat(3000);
  const lines = [
    // Python SDKs write the id first; the TypeScript SDK writes it last.
    `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"x":"${pad}"}}`,
    `{"method":"tools/call","params":{"x":"${pad}","id":99},"jsonrpc":"2.0","id":7}`,
    `{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"${pad}"}}`,
    `not json at all`,
    `{"jsonrpc":"2.0","id":8,"method":"ping"}`,
  ];
  const bytes = new TextEncoder().encode(lines.join("\r\n") + "\n");
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += 333) {
    chunks.push(bytes.slice(i, i + 333));
  }
  const written: string[] = [];
  const transport = new StdioTransport({
    maxMessageBytes: 1000,
    readable: ReadableStream.from(chunks),
    writable: new WritableStream({
      write: (c) => void written.push(new TextDecoder().decode(c)),
    }),
  });
  const got: unknown[] = [];
  const errors: string[] = [];
  const closed = new Promise<void>((r) => transport.onclose = r);
  transport.onmessage = (m) => got.push(m);
  transport.onerror = (e) => errors.push(e.message);
  await transport.start();
  await closed;
  assertEquals(got, [{ jsonrpc: "2.0", id: 8, method: "ping" }]);
  const answers = written.join("").trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(answers.map((a) => [a.id, a.error.code]), [
    ["a-1", -32600],
    [7, -32600],
  ]);
  assertMatch(answers[0].error.message, /over the message limit of 1000 bytes/);
  assertEquals(transport.refused, 4);
  assertEquals(errors.length, 2, errors.join("; "));
  assertMatch(errors[1], /not JSON: "not json at all"/);
});
