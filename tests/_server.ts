/**
 * Test helper: a real store and a real ingest server on a free loopback port.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import {
  IngestServer,
  type IngestServerOptions,
} from "../lib/ingest/server.ts";
import { tempDir } from "./_helpers.ts";

/** A running server with its store and temp dir; dispose to stop everything. */
export interface RunningServer {
  store: HarnessStore;
  server: IngestServer;
  url: string;
  root: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Start a server on 127.0.0.1 with port 0.
 *
 * @param options Server options.
 * @returns The running server.
 */
export async function startServer(
  options: IngestServerOptions = {},
): Promise<RunningServer> {
  const dir = await tempDir();
  const store = new HarnessStore(dir.path, { role: "ingest-server" });
  const server = new IngestServer(store, { port: 0, ...options });
  const url = await server.start();
  return {
    store,
    server,
    url,
    root: dir.path,
    async [Symbol.asyncDispose]() {
      await server.close();
      store.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/**
 * Files of a fixture scenario, in arrival order: the payloads
 * (`NNN-<event>.json`), not the notes beside them (`_workspace.json`).
 *
 * @param dir Scenario folder.
 * @returns Parsed payloads with their file names.
 */
export function scenarioFiles(dir: string): { name: string; body: unknown }[] {
  return [...Deno.readDirSync(dir)]
    .filter((e) =>
      e.isFile && e.name.endsWith(".json") && !e.name.startsWith("_")
    )
    .map((e) => e.name)
    .sort()
    .map((name) => ({
      name,
      body: JSON.parse(Deno.readTextFileSync(`${dir}/${name}`)),
    }));
}
