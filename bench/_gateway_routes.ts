/**
 * The routes of the gateway benchmark: direct to the upstream, and through
 * each process in between it starts (the gateway, and for the split the
 * bare proxy, nginx, the gateway with recording off and another
 * checkout's gateway).
 *
 * @module
 */
import { join } from "node:path";
import { SERVER_V8_FLAGS } from "../lib/ingest/server_heap.ts";
import {
  type Arm,
  type Proc,
  type Route,
  startProc,
  stopChild,
} from "./_gateway_measure.ts";
import { findNginx, startNginx } from "./_nginx_proxy.ts";

/** The benchmark's entry, which runs the gateway and bare-proxy children. */
const SELF = new URL("./gateway_bench.ts", import.meta.url).pathname;

/** The V8 flags another checkout's `deno task serve` runs the server with. */
async function serveV8Flags(checkout: string): Promise<string[]> {
  const config = JSON.parse(
    await Deno.readTextFile(join(checkout, "deno.json")),
  );
  return String(config.tasks?.serve ?? "").split(" ").filter((f) =>
    f.startsWith("--v8-flags=")
  );
}

/** A route through a process started here (a gateway, the bare proxy). */
function childRoute(arm: Arm, proc: Proc, profiled: boolean): Route {
  return {
    arm,
    url: proc.match[1],
    pids: () => Promise.resolve([proc.child.pid]),
    stop: () => stopChild(proc),
    ...(profiled ? { profiled: proc.child.pid } : {}),
    sent: 0,
    conversations: 0,
  };
}

/** Options of {@linkcode gatewayRoutes}. */
export interface GatewayRoutesOptions {
  /** The temp folder the gateways' stores go under. */
  root: string;
  /**
   * Where each gateway process writes its V8 CPU profile.
   *
   * @default no profile
   */
  profDir?: string;
  /** Whether to start the routes that split the added latency. */
  split: boolean;
  /** Whether nginx is one of them (when it is found). */
  nginx: boolean;
  /**
   * Another checkout whose gateway is one of them.
   *
   * @default none
   */
  baseline?: string;
}

/** The routes started, the gateway's among them. */
export interface GatewayRoutes {
  /** Every route: direct first, the gateway last. */
  routes: Route[];
  /** The gateway's route. */
  gateway: Route;
  /** How nginx ran, or why it did not (null: not asked for). */
  nginxNote: string | null;
}

/**
 * Start the processes in between and list the routes.
 *
 * @param upstream The upstream's base URL (the direct route).
 * @param options The store folder, profiling, which routes.
 * @returns The routes.
 */
export async function gatewayRoutes(
  upstream: string,
  options: GatewayRoutesOptions,
): Promise<GatewayRoutes> {
  const { root, profDir, split, nginx, baseline } = options;
  const prof = profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const gatewayRoute = async (
    arm: Arm,
    options: { store: string; extra?: string[]; baseline?: string },
  ) =>
    childRoute(
      arm,
      await startProc(
        [
          "run",
          // As `deno task serve` runs it (a baseline: as its own did).
          ...options.baseline
            ? await serveV8Flags(options.baseline)
            : [SERVER_V8_FLAGS],
          ...prof,
          `--allow-read=${root}`,
          `--allow-write=${root}`,
          "--allow-net=127.0.0.1",
          options.baseline
            ? join(options.baseline, "bench/gateway_bench.ts")
            : SELF,
          "--gateway-child",
          join(root, options.store),
          upstream,
          ...options.extra ?? [],
        ],
        { ready: /gateway (http:\/\/\S+)/, stdin: "piped" },
      ),
      profDir !== undefined,
    );
  const direct: Route = {
    arm: "direct",
    url: upstream,
    pids: () => Promise.resolve([]),
    stop: () => Promise.resolve(null),
    sent: 0,
    conversations: 0,
  };
  const routes = [direct];
  const gateway = await gatewayRoute("via", { store: "store" });
  let nginxNote: string | null = null;
  if (split) {
    routes.push(childRoute(
      "bare",
      await startProc(
        ["run", "--allow-net=127.0.0.1", SELF, "--bare-proxy-child", upstream],
        { ready: /proxy (http:\/\/\S+)/, stdin: "piped" },
      ),
      false,
    ));
    if (nginx) {
      const found = await findNginx();
      if ("why" in found) {
        nginxNote = `not measured: ${found.why}`;
        console.error(`gateway bench: ${nginxNote}`);
      } else {
        try {
          const nginx = await startNginx(found.bin, upstream);
          nginxNote =
            `${nginx.version}, one worker process, keep-alive connections to the upstream, proxy buffering off`;
          routes.push({
            arm: "nginx",
            url: nginx.url,
            pids: nginx.pids,
            stop: nginx.stop,
            sent: 0,
            conversations: 0,
          });
        } catch (err) {
          nginxNote = `not measured: ${(err as Error).message}`;
          console.error(`gateway bench: ${nginxNote}`);
        }
      }
    }
    routes.push(
      await gatewayRoute("norecord", {
        store: "store_norecord",
        extra: ["--no-record"],
      }),
    );
    if (baseline) {
      routes.push(
        await gatewayRoute("base", {
          store: "store_baseline",
          baseline,
        }),
      );
    }
  }
  routes.push(gateway);
  return { routes, gateway, nginxNote };
}
