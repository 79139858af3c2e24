/**
 * The control tools of the MCP server: names, descriptions, zod input and
 * output shapes, and what each runs on the {@linkcode CaptureCoordinator}.
 * zod is passed in (loaded with the SDK), so this module imports neither.
 *
 * @module
 */
import type { CaptureCoordinator } from "./coordinator.ts";
import {
  PACKAGE_NAME_PATTERN,
  PACKAGE_NAME_RULE,
  packageNameProblem,
} from "../package/package_name.ts";

/**
 * The slice of zod the tools use (`z` from `npm:zod`), typed loosely so
 * this module does not import zod.
 */
// deno-lint-ignore no-explicit-any
export type ZodLike = any;

/** One control tool. */
export interface ControlTool {
  /** Tool name (`^[a-zA-Z0-9_-]{1,64}$`). */
  name: string;
  /** What it does. */
  description: string;
  /** zod shape of its arguments. */
  input: Record<string, unknown>;
  /** zod shape of its structured result. */
  output: Record<string, unknown>;
  /** Run it with validated arguments. */
  run(args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The tool names, in the order tools/list gives them. */
export const CONTROL_TOOL_NAMES: readonly string[] = [
  "harness_capture_start",
  "harness_capture_finish",
  "harness_capture_outcome",
  "harness_capture_summary",
  "harness_capture_lineage",
  "harness_capture_list",
  "harness_compile",
];

/**
 * The control tools over a coordinator.
 *
 * @param z zod.
 * @param c The coordinator.
 * @returns The tools.
 */
export function controlTools(
  z: ZodLike,
  c: CaptureCoordinator,
): ControlTool[] {
  const id = z.string().min(1).describe("Capture id");
  const any = z.object({}).passthrough();
  return [
    {
      name: "harness_capture_start",
      description:
        "Start a capture and make it the active one (hook events without a capture id go to it).",
      input: {
        id: z.string().min(1).optional().describe(
          "Capture id (generated when absent)",
        ),
        label: z.string().optional().describe("A label for people"),
      },
      output: {
        capture_id: z.string(),
        started_at: z.string(),
        active: z.boolean(),
      },
      run: (a) =>
        Promise.resolve(c.startCapture({
          id: a.id as string | undefined,
          label: a.label as string | undefined,
        })),
    },
    {
      name: "harness_capture_finish",
      description: "Finish a capture.",
      input: { capture_id: id },
      output: { capture_id: z.string(), finished_at: z.string() },
      run: (a) => Promise.resolve(c.finishCapture(a.capture_id as string)),
    },
    {
      name: "harness_capture_outcome",
      description: "Record an episode's task outcome as chained evidence.",
      input: {
        capture_id: id,
        episode_id: z.string().min(1),
        success: z.boolean(),
        note: z.string().optional(),
        outcome: z.record(z.string(), z.unknown()).optional(),
      },
      output: { recorded: z.boolean(), event_id: z.string() },
      run: async (a) => {
        const ev = await c.recordOutcome(
          a.capture_id as string,
          a.episode_id as string,
          {
            success: a.success as boolean,
            outcome: a.outcome as Record<string, unknown> | undefined,
            note: a.note as string | undefined,
          },
        );
        return {
          recorded: true,
          event_id: ev.event_id,
          ...ev.payload,
        };
      },
    },
    {
      name: "harness_capture_summary",
      description:
        "Episodes, event counts, fidelity, incomplete calls, chain status, outcomes of a capture, and what a package served at the model gateway did in each episode.",
      input: { capture_id: id },
      output: { capture_id: z.string() },
      run: async (a) => ({
        capture_id: a.capture_id as string,
        ...(await c.summarize(a.capture_id as string)),
      }),
    },
    {
      name: "harness_capture_lineage",
      description: "The exact-lineage report of a capture.",
      input: { capture_id: id },
      output: { capture_id: z.string(), episodes: z.array(any) },
      run: async (a) => ({
        ...(await c.lineageReport(a.capture_id as string)),
      }),
    },
    {
      name: "harness_capture_list",
      description: "List captures.",
      input: {},
      output: { captures: z.array(any) },
      run: () => Promise.resolve({ captures: c.listCaptures() }),
    },
    {
      name: "harness_compile",
      description: "Compile captures into a behavior package.",
      input: {
        capture_ids: z.array(z.string().min(1)).min(1),
        name: z.string().regex(PACKAGE_NAME_PATTERN, {
          message: `not a package name: ${PACKAGE_NAME_RULE}`,
        }).optional().describe(
          "Package name, also its file name (letters, digits, . _ -)",
        ),
        out: z.string().optional().describe(
          "Output directory (default: <store>/packages)",
        ),
        effects: z.record(
          z.string(),
          z.enum(["read", "write", "destructive"]),
        ).optional().describe("tool → read | write | destructive"),
        contracts: z.record(z.string(), z.array(z.string())).optional()
          .describe("fact key → contract source ids (lifts to E3)"),
      },
      output: {
        file: z.string(),
        digest: z.string(),
        registered: z.boolean(),
        summary: z.string(),
      },
      run: async (a) => {
        const problem = a.name === undefined
          ? null
          : packageNameProblem(String(a.name));
        if (problem) throw new TypeError(`name: ${problem}`);
        const r = await c.compile(a.capture_ids as string[], {
          name: (a.name as string | undefined) ?? "behavior",
          out: a.out as string | undefined,
          effects: a.effects as Record<string, string> | undefined,
          contracts: a.contracts as Record<string, string[]> | undefined,
        });
        return {
          file: r.file,
          digest: r.package.digest,
          registered: r.registered,
          manifest: r.package.manifest,
          verification: {
            ...r.package.verification,
            problems: r.package.verification.problems.slice(0, 20),
          },
          summary: r.summary,
        };
      },
    },
  ];
}
