/**
 * The MCP control server: the coordinator's operations as MCP tools
 * (`harness.capture.start`, `.finish`, `.outcome`, `.summary`, `.lineage`,
 * `.list`, and `harness.compile`). A thin shell: every tool calls the
 * {@linkcode CaptureCoordinator}. The MCP SDK is loaded only when the server
 * is built, so importing this module never needs it.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import {
  CaptureCoordinator,
  type CaptureCoordinatorOptions,
} from "./coordinator.ts";

/** The pinned SDK the server is built with. */
export const MCP_SDK = "npm:@modelcontextprotocol/sdk@1.32.2";

/** The MCP SDK could not be loaded. */
export class McpUnavailableError extends Error {
  /**
   * Create a `McpUnavailableError`.
   *
   * @param options Cause.
   */
  constructor(options?: ErrorOptions) {
    super(
      `The MCP control server needs the MCP SDK (${MCP_SDK}), which could not be loaded` +
        ((options?.cause as Error)?.message
          ? ` (${(options?.cause as Error).message})`
          : "") +
        `: run "deno cache ${MCP_SDK}" with access to the npm registry. The ingest server and the CLI work without it`,
      options,
    );
    this.name = "McpUnavailableError";
  }
}

/** What the server needs from the SDK. */
export interface McpSdk {
  /** The Server. */
  // deno-lint-ignore no-explicit-any
  Server: new (info: { name: string; version: string }, options: any) => any;
  /** The ListToolsRequestSchema. */
  // deno-lint-ignore no-explicit-any
  ListToolsRequestSchema: any;
  /** The CallToolRequestSchema. */
  // deno-lint-ignore no-explicit-any
  CallToolRequestSchema: any;
}

/** Load the SDK (the default loader). */
export async function loadMcpSdk(): Promise<McpSdk> {
  const [server, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Server: server.Server,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    CallToolRequestSchema: types.CallToolRequestSchema,
  };
}

/** Options of {@linkcode buildMcpServer}. */
export interface McpServerOptions extends CaptureCoordinatorOptions {
  /**
   * Server name.
   * @default "harness"
   */
  name?: string;
  /** SDK loader (for tests and embedding); defaults to the pinned npm SDK. */
  loadSdk?: () => Promise<McpSdk>;
}

const ID = { type: "string", description: "Capture id" };

/** The control tools and their input schemas. */
export const CONTROL_TOOLS: readonly {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}[] = [
  {
    name: "harness.capture.start",
    description:
      "Start a capture and make it the active one (hook events without a capture id go to it).",
    inputSchema: {
      type: "object",
      properties: {
        id: {
          type: "string",
          description: "Capture id (generated when absent)",
        },
        label: { type: "string", description: "A label for people" },
      },
      additionalProperties: false,
    },
  },
  {
    name: "harness.capture.finish",
    description: "Finish a capture.",
    inputSchema: {
      type: "object",
      properties: { capture_id: ID },
      required: ["capture_id"],
      additionalProperties: false,
    },
  },
  {
    name: "harness.capture.outcome",
    description: "Record an episode's task outcome as chained evidence.",
    inputSchema: {
      type: "object",
      properties: {
        capture_id: ID,
        episode_id: { type: "string" },
        success: { type: "boolean" },
        note: { type: "string" },
        outcome: { type: "object" },
      },
      required: ["capture_id", "episode_id", "success"],
      additionalProperties: false,
    },
  },
  {
    name: "harness.capture.summary",
    description:
      "Episodes, event counts, fidelity, incomplete calls, chain status and outcomes of a capture.",
    inputSchema: {
      type: "object",
      properties: { capture_id: ID },
      required: ["capture_id"],
      additionalProperties: false,
    },
  },
  {
    name: "harness.capture.lineage",
    description: "The exact-lineage report of a capture.",
    inputSchema: {
      type: "object",
      properties: { capture_id: ID },
      required: ["capture_id"],
      additionalProperties: false,
    },
  },
  {
    name: "harness.capture.list",
    description: "List captures.",
    inputSchema: {
      type: "object",
      properties: {},
      additionalProperties: false,
    },
  },
  {
    name: "harness.compile",
    description: "Compile captures into a behavior package.",
    inputSchema: {
      type: "object",
      properties: {
        capture_ids: { type: "array", items: { type: "string" }, minItems: 1 },
        name: { type: "string" },
        out: {
          type: "string",
          description: "Output directory (default: <store>/packages)",
        },
        effects: {
          type: "object",
          description: "tool → read | write | destructive",
        },
        contracts: {
          type: "object",
          description: "fact key → contract source ids (lifts to E3)",
        },
      },
      required: ["capture_ids"],
      additionalProperties: false,
    },
  },
];

function ok(data: Record<string, unknown>) {
  return {
    content: [{ type: "text", text: JSON.stringify(data, null, 2) }],
    structuredContent: data,
  };
}

function fail(message: string) {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * Build the MCP control server over a store.
 *
 * @param store The store.
 * @param options Name, SDK loader, coordinator options.
 * @returns An SDK `Server` (connect it to a transport) and its coordinator.
 * @throws {McpUnavailableError} When the SDK cannot be loaded.
 */
export async function buildMcpServer(
  store: HarnessStore,
  options: McpServerOptions = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ server: any; coordinator: CaptureCoordinator }> {
  let sdk: McpSdk;
  try {
    sdk = await (options.loadSdk ?? loadMcpSdk)();
  } catch (err) {
    throw new McpUnavailableError({ cause: err });
  }
  const coordinator = new CaptureCoordinator(store, options);
  const server = new sdk.Server(
    { name: options.name ?? "harness", version: "0.1.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(
    sdk.ListToolsRequestSchema,
    () => ({ tools: CONTROL_TOOLS }),
  );
  server.setRequestHandler(
    sdk.CallToolRequestSchema,
    async (
      req: { params: { name: string; arguments?: Record<string, unknown> } },
    ) => {
      const a = req.params.arguments ?? {};
      try {
        switch (req.params.name) {
          case "harness.capture.start":
            return ok(coordinator.startCapture({
              id: a.id as string | undefined,
              label: a.label as string | undefined,
            }));
          case "harness.capture.finish":
            return ok(coordinator.finishCapture(String(a.capture_id)));
          case "harness.capture.outcome": {
            const ev = coordinator.markOutcome(
              String(a.capture_id),
              String(a.episode_id),
              {
                success: a.success as boolean,
                outcome: a.outcome as Record<string, unknown> | undefined,
                note: a.note as string | undefined,
              },
            );
            return ok({ recorded: true, event_id: ev.event_id, ...ev.payload });
          }
          case "harness.capture.summary":
            return ok({
              ...(await coordinator.summarize(String(a.capture_id))),
            });
          case "harness.capture.lineage":
            return ok({
              ...(await coordinator.lineageReport(String(a.capture_id))),
            });
          case "harness.capture.list":
            return ok({ captures: coordinator.listCaptures() });
          case "harness.compile": {
            const r = await coordinator.compile(a.capture_ids as string[], {
              name: (a.name as string | undefined) ?? "behavior",
              out: a.out as string | undefined,
              effects: a.effects as Record<string, string> | undefined,
              contracts: a.contracts as Record<string, string[]> | undefined,
            });
            return ok({
              file: r.file,
              digest: r.package.digest,
              registered: r.registered,
              manifest: r.package.manifest,
              verification: {
                ...r.package.verification,
                problems: r.package.verification.problems.slice(0, 20),
              },
              summary: r.summary,
            });
          }
          default:
            return fail(`Unknown tool ${req.params.name}`);
        }
      } catch (err) {
        return fail((err as Error).message);
      }
    },
  );
  return { server, coordinator };
}
