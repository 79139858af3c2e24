/**
 * Test rig for the model gateway: a scripted upstream, the ingest server in
 * front of it (`modelGateway` pointed at the upstream), the official clients
 * aimed at the server, and readers of what got recorded.
 *
 * @module
 */
import OpenAI from "openai";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import type { ModelGatewayOptions } from "../../lib/model_gateway/mod.ts";
import { type RunningServer, startServer } from "../_server.ts";
import { assertEquals } from "../_assert.ts";
import {
  type Responder,
  startUpstreams,
  tapFetch,
  type Upstreams,
} from "./_upstreams.ts";
import { writeActiveCapture } from "../../lib/store/active_capture.ts";
import type { HarnessStoreOptions } from "../../lib/store/mod.ts";
import { Anthropic, type AnthropicClient } from "./_anthropic_sdk.ts";

/**
 * The client's API key in every gateway test: no redaction rule matches it,
 * so finding it nowhere in the store shows it was never written, not that it
 * was masked.
 */
export const KEY = "gwtest-QUAGGA-4f2e9b7c1d";

/** A running upstream, a gateway in front of it, and clients. */
export interface GatewayRig {
  /** The scripted upstream. */
  up: Upstreams;
  /** The ingest server with its store. */
  server: RunningServer;
  /** The capture the clients record into (`x-harness-capture`, or the active one). */
  capture: string;
  /** Headers every client sends (the capture). */
  headers: Record<string, string>;
  /** Bases for clients aimed at the gateway. */
  bases: { openaiBase: string; anthropicBase: string };
  /** Responses the rig's clients got, bodies read in full. */
  tap: ReturnType<typeof tapFetch>;
  /** An OpenAI client through the gateway (no retries). */
  openai(
    options?: { timeout?: number; organization?: string; maxRetries?: number },
  ): OpenAI;
  /** An Anthropic client through the gateway (no retries). */
  anthropic(
    options?: { timeout?: number; maxRetries?: number },
  ): AnthropicClient;
  /** The capture's events once every answered exchange is recorded. */
  events(): Promise<TraceEvent[]>;
  /** Stop the server, then the upstream. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Start an upstream and a gateway in front of it.
 *
 * @param options Capture id and gateway options (upstreams are set here).
 * @returns The rig.
 */
export async function startGateway(
  options: {
    capture?: string;
    gateway?: ModelGatewayOptions;
    respond?: Responder;
    /**
     * Send no header of ours: the capture is the active one (as an
     * unmodified agent records).
     */
    unmodified?: boolean;
    /** Options of the server's store. */
    store?: HarnessStoreOptions;
  } = {},
): Promise<GatewayRig> {
  const up = startUpstreams([], { respond: options.respond });
  const server = await startServer({
    modelGateway: {
      ...options.gateway,
      upstreamOpenai: up.openaiBase,
      upstreamAnthropic: up.anthropicBase,
    },
  }, options.store);
  const capture = options.capture ?? "cap_gateway";
  if (options.unmodified) writeActiveCapture(server.root, capture);
  const headers: Record<string, string> = options.unmodified
    ? {}
    : { "x-harness-capture": capture };
  const tap = tapFetch();
  const bases = {
    openaiBase: `${server.url}/v1`,
    anthropicBase: server.url,
  };
  return {
    up,
    server,
    capture,
    headers,
    bases,
    tap,
    openai: (o = {}) =>
      new OpenAI({
        baseURL: bases.openaiBase,
        apiKey: KEY,
        organization: o.organization ?? "org-gw",
        maxRetries: o.maxRetries ?? 0,
        timeout: o.timeout ?? 20_000,
        defaultHeaders: headers,
        fetch: tap.fetch,
      }),
    anthropic: (o = {}) =>
      new Anthropic({
        baseURL: bases.anthropicBase,
        apiKey: KEY,
        maxRetries: o.maxRetries ?? 0,
        timeout: o.timeout ?? 20_000,
        defaultHeaders: headers,
        fetch: tap.fetch,
      }),
    events: () => recordedEvents(server, capture),
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await up.close();
    },
  };
}

/**
 * A capture's events after the gateway has recorded everything answered.
 *
 * @param server The running server.
 * @param capture Capture id.
 * @returns The events in sequence order (none when nothing was recorded).
 */
export async function recordedEvents(
  server: RunningServer,
  capture: string,
): Promise<TraceEvent[]> {
  await server.server.modelGateway?.settled();
  if (!server.store.hasCapture(capture)) return [];
  const out: TraceEvent[] = [];
  for await (const ev of server.store.readEvents(capture)) out.push(ev);
  return out;
}

/**
 * Files under a directory whose bytes contain a string.
 *
 * @param root Directory.
 * @param needle The string.
 * @returns Paths of the files holding it.
 */
export async function filesContaining(
  root: string,
  needle: string,
): Promise<string[]> {
  const want = new TextEncoder().encode(needle);
  const hits: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.isFile && contains(await Deno.readFile(path), want)) {
        hits.push(path);
      }
    }
  };
  await walk(root);
  return hits;
}

/**
 * Assert the rig's key is in no file of the store (spools, blobs, index,
 * WAL) and not on `/health`, after every exchange is recorded and flushed.
 *
 * @param rig The rig.
 * @returns The number of files searched (so a test can see it searched).
 */
export async function assertKeyNowhere(rig: GatewayRig): Promise<number> {
  await rig.server.server.modelGateway?.settled();
  rig.server.store.flush();
  const health = await (await fetch(`${rig.server.url}/health`)).text();
  assertEquals(health.includes(KEY), false, "the key is on /health");
  assertEquals(await filesContaining(rig.server.root, KEY), []);
  if (rig.server.store.hasCapture(rig.capture)) {
    // The search does read what was written: the capture id is found.
    const spool = rig.server.store.spoolPath(rig.capture);
    const found = await filesContaining(rig.server.root, rig.capture);
    assertEquals(found.includes(spool), true, "the search missed the spool");
  }
  let files = 0;
  const count = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      if (e.isDirectory) await count(`${dir}/${e.name}`);
      else files++;
    }
  };
  await count(rig.server.root);
  return files;
}

/**
 * Events of some kinds, in order.
 *
 * @param events Events.
 * @param kinds Kinds wanted.
 * @returns Those events.
 */
export function ofKind(events: TraceEvent[], ...kinds: string[]): TraceEvent[] {
  return events.filter((e) => kinds.includes(e.kind));
}

function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) continue outer;
    }
    return true;
  }
  return false;
}
