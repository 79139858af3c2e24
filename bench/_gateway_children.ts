/**
 * The processes the gateway benchmark puts between client and upstream
 * (`gateway_bench.ts --gateway-child`, `--bare-proxy-child`): a real
 * ingest server with its model gateway, and a bare Deno.serve + fetch
 * proxy. Each prints its URL, runs until stdin closes, then prints its
 * stats as the last line.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import { IngestServer } from "../lib/ingest/server.ts";

/** Wait until the parent closes stdin. */
async function untilStdinCloses(): Promise<void> {
  for await (const _ of Deno.stdin.readable) {
    // Nothing comes; the parent closes stdin to stop the process.
  }
}

/**
 * The gateway process: a real ingest server over `root` until stdin
 * closes; then its gateway's stats and its listener's connection counts. `--no-record` turns recording off
 * (every exchange is forwarded and read, none stored); `--fetch-client`
 * asks the upstream through `fetch`, as a remote upstream is asked, not
 * through the gateway's own client for loopback upstreams.
 *
 * @param root The store root.
 * @param options The upstream's origin; whether to record; whether to use
 *   the own client.
 */
export async function gatewayChild(
  root: string,
  options: { upstream: string; record: boolean; ownClient?: boolean },
): Promise<void> {
  const { upstream, record } = options;
  const store = new HarnessStore(root, { role: "ingest-server" });
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: {
      upstreams: {
        openai: `${upstream}/v1`,
        anthropic: upstream,
        gemini: upstream,
      },
      ...(record ? {} : { record: false }),
      ...(options.ownClient === false ? { ownClient: false } : {}),
    },
  });
  console.log(`gateway ${await server.start()}`);
  await untilStdinCloses();
  await server.close();
  const stats = server.modelGateway?.stats;
  const connections = server.stats?.connections;
  console.log(JSON.stringify(stats ? { ...stats, connections } : null));
  store.close();
}

/** Headers a proxy does not pass on. */
const HOP = new Set([
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
]);

function passOn(headers: Headers): Headers {
  const out = new Headers();
  headers.forEach((v, k) => {
    if (!HOP.has(k)) out.set(k, v);
  });
  return out;
}

/**
 * The floor of forwarding in Deno: Deno.serve, fetch, the body piped back,
 * until stdin closes.
 *
 * @param upstream The upstream's origin.
 */
export async function bareProxyChild(upstream: string): Promise<void> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const u = new URL(req.url);
      const res = await fetch(`${upstream}${u.pathname}${u.search}`, {
        method: req.method,
        headers: passOn(req.headers),
        body: await req.arrayBuffer(),
      });
      return new Response(res.body, {
        status: res.status,
        headers: passOn(res.headers),
      });
    },
  );
  console.log(`proxy http://127.0.0.1:${server.addr.port}`);
  await untilStdinCloses();
  await server.shutdown();
  console.log("null");
}
