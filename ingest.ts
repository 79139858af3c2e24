/**
 * The harness control entry: the ingest server, the hook forwarder, the
 * installers, and the capture and store commands.
 *
 * Permissions, by command (the `deno task` entries carry them):
 * - store and capture commands, `demo`: `--allow-read=<root> --allow-write=<root> --allow-env=HARNESS_ROOT`
 *   (root `./.harness` unless `HARNESS_ROOT`/`--root` say otherwise)
 * - `serve`, `status`, `stop`: the above plus `--allow-net=127.0.0.1`
 *   (`serve --detach` also `--allow-run`, to start itself in the background)
 * - `hook <host>`: `--allow-read --allow-write=/tmp/harness-hook-state --allow-net=127.0.0.1 --allow-env=HARNESS_INGEST_URL,HARNESS_CAPTURE_ID,HARNESS_HOOK_TIMEOUT,HARNESS_INGEST_TOKEN`
 * - `install`, `uninstall`: `--allow-read --allow-write=<the host's config dir> --allow-env=HOME,XDG_CONFIG_HOME`
 *
 * ```sh
 * deno run --allow-read --allow-write=/tmp/harness-hook-state --allow-net=127.0.0.1 --allow-env=HARNESS_INGEST_URL,HARNESS_CAPTURE_ID,HARNESS_HOOK_TIMEOUT,HARNESS_INGEST_TOKEN ingest.ts hook claude-code
 * ```
 *
 * @module
 */
import { hookCommand } from "./lib/cli/cmd_hook.ts";
import { type Io, UsageError } from "./lib/cli/io.ts";
import { terminalIo } from "./lib/cli/terminal_text.ts";
import { maskUrlCredentials } from "./lib/trace/mask_url.ts";
import {
  type CommandTable,
  parseTableLine,
  refuseForeignFlags,
} from "./lib/cli/command.ts";
import {
  INGEST_COMMON,
  type IngestContext,
  ingestContext,
} from "./lib/cli/ingest_context.ts";
import { INGEST_COMMANDS, INGEST_USAGE } from "./lib/cli/ingest_commands.ts";

const COMMANDS: CommandTable<IngestContext> = {
  ...INGEST_COMMANDS,
  demo: {
    options: { seed: { type: "string" } },
    run: async ({ cl, root, json, io }) => {
      const { demo } = await import("./examples/order_desk/demo.ts");
      const seed = cl.string("seed");
      return await demo(root, json, io, {
        seed: seed === undefined ? undefined : Number(seed),
      });
    },
  },
};

/**
 * Run one command line.
 *
 * @param args Command-line arguments (without the program).
 * @param io Where output goes.
 * @returns The exit code.
 */
export async function main(
  args: string[],
  io: Io = { out: (t) => console.log(t), err: (t) => console.error(t) },
): Promise<number> {
  // The forwarder: light imports, always exit 0, only what the host expects.
  if (args[0] === "hook") return await hookCommand(args.slice(1), io);
  // Text output escapes control characters a capture may carry.
  io = terminalIo(io);
  const json = args.includes("--json");
  // The command's words once parsed: a usage error prints that command's help.
  const words: string[] = [];
  try {
    return await run(args, io, words);
  } catch (err) {
    const { errorText, usageErrorText } = await import("./lib/cli/help.ts");
    if (err instanceof UsageError) {
      io.err(
        json
          ? errorText(err.message, { exitCode: 2, json: true })
          : usageErrorText(err.message, {
            usage: INGEST_USAGE,
            program: "ingest.ts",
            words: words.length ? words : args,
          }),
      );
      return 2;
    }
    let text = (err as Error).message ?? String(err);
    if (/^Requires write access/.test(text)) {
      const { WRITE_HINT } = await import("./lib/cli/cmd_store.ts");
      text = `${text.replace(/, run again with.*$/, "")}: ${WRITE_HINT}`;
    }
    io.err(
      errorText(`harness: ${maskUrlCredentials(text)}`, { exitCode: 1, json }),
    );
    return 1;
  }
}

async function run(args: string[], io: Io, words: string[]): Promise<number> {
  const cl = await parseTableLine(args, {
    table: COMMANDS,
    common: INGEST_COMMON,
  });
  const name = cl.positionals[0];
  if (cl.flag("help") || name === undefined) {
    const { commandHelp } = await import("./lib/cli/help.ts");
    io.out(
      commandHelp(INGEST_USAGE, {
        program: "ingest.ts",
        words: cl.positionals.slice(0, 2),
      }),
    );
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    throw new UsageError(`unknown command "${cl.positionals.join(" ")}"`);
  }
  words.push(...cl.positionals.slice(0, 2));
  refuseForeignFlags(cl, { name, command, common: INGEST_COMMON });
  return await command.run(
    ingestContext(cl, { args, io, entry: import.meta.url }),
  );
}

if (import.meta.main) Deno.exit(await main(Deno.args));
