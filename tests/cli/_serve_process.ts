/**
 * Test helper: `ingest.ts serve` as a process of its own, as a user starts
 * it (loopback only, port 0), read until it has said where it listens; and
 * stopped with SIGTERM, as Ctrl-C does.
 *
 * @module
 */

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

/** A running `serve`. */
export interface ServeProcess {
  /** Its URL (`http://127.0.0.1:PORT`). */
  url: string;
  /** What it printed on stdout until now (the start-up lines at least). */
  out: () => string;
  /** What it printed on stderr until now. */
  err: () => string;
  /** SIGTERM, then the exit code (and everything it printed). */
  stop: () => Promise<{ code: number; out: string; err: string }>;
  /** Kills it if it still runs. */
  [Symbol.asyncDispose]: () => Promise<void>;
}

/** Options of {@linkcode startServe}. */
export interface StartServeOptions {
  /** More flags. */
  args?: string[];
  /** Environment (the upstreams' variables). */
  env?: Record<string, string>;
  /**
   * What stdout must show before it counts as started.
   * @default the line with its URL
   */
  until?: RegExp;
}

/**
 * Start `ingest.ts serve --port 0 --root ROOT ...args`.
 *
 * @param root The store root.
 * @param options Flags, environment, when it counts as started.
 * @returns The running server, once its start-up lines are out.
 * @throws {Error} When it exits first (with what it said).
 */
export async function startServe(
  root: string,
  options: StartServeOptions = {},
): Promise<ServeProcess> {
  const { args = [], env = {}, until = /ingest server on http/ } = options;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-net=127.0.0.1",
      INGEST,
      "serve",
      "--port",
      "0",
      "--root",
      root,
      ...args,
    ],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let err = "";
  let changed: () => void = () => {};
  const pump = async (
    stream: ReadableStream<Uint8Array>,
    add: (t: string) => void,
  ) => {
    for await (const t of stream.pipeThrough(new TextDecoderStream())) {
      add(t);
      changed();
    }
  };
  const reading = Promise.all([
    pump(child.stdout, (t) => out += t),
    pump(child.stderr, (t) => err += t),
  ]);
  const status = child.status;
  let exited = false;
  status.then(() => {
    exited = true;
    changed();
  });
  // Started: the first line names the URL; `until` waits for more.
  let url = "";
  while (!url) {
    const m = /on (http:\/\/127\.0\.0\.1:\d+) /.exec(out);
    if (m && until.test(out)) {
      url = m[1];
      break;
    }
    if (exited) {
      await reading;
      throw new Error(
        `serve exited with ${(await status).code}: ${out}\n${err}`,
      );
    }
    await new Promise<void>((r) => changed = r);
  }
  let done: Promise<{ code: number; out: string; err: string }> | null = null;
  const stop = () =>
    done ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone already */ }
      const { code } = await status;
      await reading;
      return { code, out, err };
    })();
  return {
    url,
    out: () => out,
    err: () => err,
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}
