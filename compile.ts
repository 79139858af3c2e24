/**
 * The compile entry: turns captures into a behavior package, and explains
 * packages.
 *
 * ```sh
 * deno run --allow-read --allow-write=out --allow-env=HARNESS_ROOT compile.ts --capture cap_1 --out out
 * deno run --allow-read compile.ts explain out/behavior.package.json
 * deno run --allow-read --allow-write=out compile.ts report out/behavior.package.json --out out/behavior.html
 * ```
 *
 * Permissions: `--allow-read` (the store's spools and blobs, and the map
 * files) and `--allow-write=<out dir>` only: compile never writes the store.
 * The `compile` task grants the folder it is run from (`$INIT_CWD`, where
 * relative paths are taken from) and `--allow-env=INIT_CWD`.
 *
 * @module
 */
import {
  commandHelp,
  errorText,
  usageErrorText,
  usageHelp,
} from "./lib/cli/help.ts";
import { type Io, UsageError } from "./lib/cli/io.ts";
import { parseTableLine, refuseForeignFlags } from "./lib/cli/command.ts";
import {
  COMPILE,
  COMPILE_COMMANDS,
  COMPILE_COMMON,
  COMPILE_USAGE,
  compileContext,
} from "./lib/cli/compile_commands.ts";
import { terminalIo } from "./lib/cli/terminal_text.ts";

// Text output escapes control characters a capture or package may carry.
const io: Io = terminalIo({
  out: (t) => console.log(t),
  err: (t) => console.error(t),
});

/**
 * Run one command line.
 *
 * @param args Command-line arguments.
 * @returns Exit code.
 */
export async function main(args: string[]): Promise<number> {
  let cl;
  try {
    cl = await parseTableLine(args, {
      table: { ...COMPILE_COMMANDS, "": COMPILE },
      common: COMPILE_COMMON,
    });
  } catch (err) {
    io.err(
      args.includes("--json")
        ? errorText((err as Error).message, { exitCode: 2, json: true })
        : usageErrorText((err as Error).message, {
          usage: COMPILE_USAGE,
          program: "compile.ts",
          words: args,
          prefix: `harness ${args[0] === "run" ? "run" : "compile"}`,
        }),
    );
    return 2;
  }
  const p = cl.positionals;
  if (cl.flag("help")) {
    io.out(
      p.length
        ? commandHelp(COMPILE_USAGE, {
          program: "compile.ts",
          words: p.slice(0, 1),
        })
        : COMPILE_USAGE,
    );
    return 0;
  }
  const json = cl.flag("json");
  try {
    const command = p.length === 0
      ? COMPILE
      : Object.hasOwn(COMPILE_COMMANDS, p[0])
      ? COMPILE_COMMANDS[p[0]]
      : undefined;
    if (!command) throw new UsageError(`unknown command "${p[0]}"`);
    refuseForeignFlags(cl, {
      name: p[0] ?? "compile",
      command,
      common: COMPILE_COMMON,
    });
    return await command.run(compileContext(cl, io));
  } catch (err) {
    const code = err instanceof UsageError ? 2 : 1;
    // `run` speaks as itself: its errors are about running, not compiling.
    const msg = `harness ${p[0] === "run" ? "run" : "compile"}: ${
      (err as Error).message
    }`;
    io.err(
      json
        ? errorText(msg, { exitCode: code, json: true })
        : code === 2
        ? `${msg}\n\n${
          usageHelp(COMPILE_USAGE, {
            program: "compile.ts",
            // Compile itself has no command word: its line starts --capture.
            words: p.length && Object.hasOwn(COMPILE_COMMANDS, p[0])
              ? p.slice(0, 1)
              : p.length
              ? []
              : ["--capture"],
          })
        }`
        : msg,
    );
    return code;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
