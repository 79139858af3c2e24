/**
 * Test helper: a real store and a real ingest server on a free loopback port.
 *
 * @module
 */
import { HarnessStore, type HarnessStoreOptions } from "../lib/store/mod.ts";
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
 * @param storeOptions Options of its store (its role is the server's).
 * @returns The running server.
 */
export async function startServer(
  options: IngestServerOptions = {},
  storeOptions: HarnessStoreOptions = {},
): Promise<RunningServer> {
  const dir = await tempDir();
  const store = new HarnessStore(dir.path, {
    ...storeOptions,
    role: "ingest-server",
  });
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
 * The scenario folders under a host's fixtures, relative to it and sorted:
 * each folder that holds payloads, and for a folder that holds none, the
 * folders under it that do (`dataflow/v1` … `dataflow/v9`: one recorded
 * session per variant).
 *
 * @param hostDir The host's fixture folder.
 * @returns The scenario folders (`basic`, `dataflow/v1`, …).
 */
export function scenarioDirs(hostDir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    const dir = rel ? `${hostDir}/${rel}` : hostDir;
    for (const e of [...Deno.readDirSync(dir)]) {
      if (!e.isDirectory || e.name.startsWith("_")) continue;
      const sub = rel ? `${rel}/${e.name}` : e.name;
      if (scenarioFiles(`${hostDir}/${sub}`).length) out.push(sub);
      else if (!rel) walk(sub);
    }
  };
  walk("");
  return out.sort();
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
