/**
 * The MCP control server: the coordinator's operations as MCP tools
 * (`harness_capture_start`, `_finish`, `_outcome`, `_summary`, `_lineage`,
 * `_list`, and `harness_compile`; names within `^[a-zA-Z0-9_-]{1,64}$`, the
 * rule strict clients apply). Tools are registered with the SDK's
 * `McpServer.registerTool` and zod input and output schemas; arguments are
 * validated before anything runs, and a bad one is a JSON-RPC
 * `InvalidParams` error naming the argument. A thin shell: every tool calls
 * the {@linkcode CaptureCoordinator}. The MCP SDK and zod are loaded only
 * when the server is built, so importing this module never needs them.
 * `ingest.ts mcp` serves it on stdio through the proxy's `StdioTransport`
 * (it ends when the host closes stdin; the SDK's stdio transport never
 * notices that).
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import {
  CaptureCoordinator,
  type CaptureCoordinatorOptions,
} from "./coordinator.ts";
import { controlTools, type ZodLike } from "./mcp_tools.ts";

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
      `The MCP control server needs the MCP SDK (${MCP_SDK}) and zod, which could not be loaded` +
        ((options?.cause as Error)?.message
          ? ` (${(options?.cause as Error).message})`
          : "") +
        `: run "deno cache ${MCP_SDK}" with access to the npm registry. The ingest server and the CLI work without it`,
      options,
    );
    this.name = "McpUnavailableError";
  }
}

/** What the server needs from the SDK and zod. */
export interface McpSdk {
  /** The SDK's high-level server. */
  // deno-lint-ignore no-explicit-any
  McpServer: new (info: { name: string; version: string }) => any;
  /** The CallToolRequestSchema (the server validates arguments itself). */
  // deno-lint-ignore no-explicit-any
  CallToolRequestSchema: any;
  /** The SDK's error class for JSON-RPC errors. */
  McpError: new (code: number, message: string) => Error;
  /** The JSON-RPC InvalidParams code. */
  invalidParams: number;
  /** zod. */
  z: ZodLike;
}

/**
 * The SDK modules, named at run time (through the import map in
 * deno.json, pinned by the lock file): a literal `import("…")` would put
 * the SDK and its dependencies in the module graph of every entry that can
 * reach this file, and a first run of the demo would download them all.
 */
const SDK_MODULES = [
  "@modelcontextprotocol/sdk/server/mcp.js",
  "@modelcontextprotocol/sdk/types.js",
  "zod",
];

/** Load the SDK and zod (the default loader). */
export async function loadMcpSdk(): Promise<McpSdk> {
  const [mcp, types, zod] = await Promise.all(
    SDK_MODULES.map((m) => import(m)),
  );
  return {
    McpServer: mcp.McpServer,
    CallToolRequestSchema: types.CallToolRequestSchema,
    McpError: types.McpError,
    invalidParams: types.ErrorCode.InvalidParams,
    z: zod.z as unknown as ZodLike,
  };
}

/** Options of {@linkcode buildMcpServer}. */
export interface McpServerOptions extends CaptureCoordinatorOptions {
  /**
   * Server name.
   * @default "harness"
   */
  name?: string;
  /**
   * SDK loader (for tests); defaults to the pinned npm SDK.
   * @internal
   */
  loadSdk?: () => Promise<McpSdk>;
}

function ok(data: Record<string, unknown>) {
  return {
    content: [{ type: "text", text: JSON.stringify(data, null, 2) }],
    structuredContent: data,
  };
}

function fail(message: string) {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Where a zod issue points, as `argument.path`. */
function issueText(
  issue: { path: PropertyKey[]; message: string },
): string {
  const where = issue.path.map(String).join(".") || "(arguments)";
  return `${where}: ${issue.message}`;
}

/**
 * Build the MCP control server over a store.
 *
 * @param store The store.
 * @param options Name, SDK loader, coordinator options.
 * @returns The SDK's `McpServer` (connect it to a transport) and its coordinator.
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
  const server = new sdk.McpServer({
    name: options.name ?? "harness",
    version: "0.1.0",
  });
  const tools = controlTools(sdk.z, coordinator);
  for (const t of tools) {
    server.registerTool(t.name, {
      description: t.description,
      inputSchema: t.input,
      // Results carry more than the schema names (reports, manifests).
      outputSchema: sdk.z.looseObject(t.output),
    }, () => fail("not reached: calls are dispatched below"));
  }
  // Validation before anything runs: a bad argument is a JSON-RPC error
  // naming it (the SDK would answer a tool error result instead).
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.server.setRequestHandler(
    sdk.CallToolRequestSchema,
    async (
      req: { params: { name: string; arguments?: Record<string, unknown> } },
    ) => {
      const tool = byName.get(req.params.name);
      if (!tool) {
        throw new sdk.McpError(
          sdk.invalidParams,
          `Unknown tool ${req.params.name}; tools/list names the ${tools.length} tools`,
        );
      }
      const parsed = sdk.z.object(tool.input).strict().safeParse(
        req.params.arguments ?? {},
      );
      if (!parsed.success) {
        throw new sdk.McpError(
          sdk.invalidParams,
          `Invalid arguments for ${tool.name}: ${
            parsed.error.issues.map(issueText).join("; ")
          }`,
        );
      }
      try {
        const data = await tool.run(parsed.data);
        const out = sdk.z.looseObject(tool.output).safeParse(data);
        if (!out.success) {
          return fail(
            `${tool.name} produced output that breaks its schema: ${
              out.error.issues.map(issueText).join("; ")
            }`,
          );
        }
        return ok(data);
      } catch (err) {
        return fail((err as Error).message);
      }
    },
  );
  return { server, coordinator };
}
