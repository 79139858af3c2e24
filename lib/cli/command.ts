/**
 * A command table for an entry module: each command names the flags it
 * reads and how it runs; {@linkcode parseCommandLine} reads a command line
 * with the flags of the whole table (so a flag is parsed the same way
 * whichever command it comes with), and {@linkcode CommandLine} gives typed
 * access to what was given.
 *
 * @module
 */
import type { ParseArgsOptionsConfig } from "node:util";
import { UsageError } from "./io.ts";

/** Flags as `node:util` `parseArgs` declares them. */
export type Options = ParseArgsOptionsConfig;

/** One command of an entry module. */
export interface Command<C> {
  /** The flags it reads, beside the entry's common ones (`--root`, `--json`, `-h`). */
  options: Options;
  /**
   * Run it.
   *
   * @param context The command line and what the entry resolved from it.
   * @returns The exit code.
   * @throws {UsageError} For a command line it cannot run (exit 2).
   */
  run(context: C): Promise<number>;
}

/** Commands by their first word. */
export type CommandTable<C> = Record<string, Command<C>>;

/** A parsed command line. */
export class CommandLine {
  /** The words that are not flags, in order (the command's first). */
  readonly positionals: string[];
  /** The flags given on the line (without `--`), in order. */
  readonly given: string[];
  readonly #values: Record<string, unknown>;

  /**
   * Create a `CommandLine`.
   *
   * @param values Flag values by name.
   * @param positionals The other words.
   * @param given The flags given (defaults are not).
   */
  constructor(
    values: Record<string, unknown>,
    positionals: string[],
    given: string[] = [],
  ) {
    this.#values = values;
    this.positionals = positionals;
    this.given = given;
  }

  /**
   * A string flag's value.
   *
   * @param name The flag without `--`.
   * @returns Its value, or undefined when not given.
   */
  string(name: string): string | undefined {
    const v = this.#values[name];
    return typeof v === "string" ? v : undefined;
  }

  /**
   * A repeatable string flag's values.
   *
   * @param name The flag without `--`.
   * @returns Its values, or undefined when not given.
   */
  strings(name: string): string[] | undefined {
    const v = this.#values[name];
    return Array.isArray(v) ? v.map(String) : undefined;
  }

  /**
   * A boolean flag.
   *
   * @param name The flag without `--`.
   * @returns Whether it was given.
   */
  flag(name: string): boolean {
    return this.#values[name] === true;
  }
}

/**
 * Every flag of a table and the common ones, as one declaration.
 *
 * @param table The commands.
 * @param common Flags every command takes.
 * @returns The union of their flags.
 * @throws {TypeError} When two commands declare one flag differently.
 */
export function tableOptions<C>(
  table: CommandTable<C>,
  common: Options,
): Options {
  const all: Options = { ...common };
  for (const [name, command] of Object.entries(table)) {
    for (const [flag, spec] of Object.entries(command.options)) {
      const had = all[flag];
      if (had && JSON.stringify(had) !== JSON.stringify(spec)) {
        throw new TypeError(
          `Command "${name}" declares --${flag} as ${
            JSON.stringify(spec)
          }, another as ${JSON.stringify(had)}`,
        );
      }
      all[flag] = spec;
    }
  }
  return all;
}

/**
 * Parse a command line.
 *
 * @param args The arguments (without the program).
 * @param options The flags (see {@linkcode tableOptions}).
 * @returns The command line.
 * @throws {UsageError} For an unknown flag or a flag without its value.
 */
export async function parseCommandLine(
  args: string[],
  options: Options,
): Promise<CommandLine> {
  // Loaded on use: the hook forwarder shares the entry and parses nothing.
  const { parseArgs } = await import("node:util");
  try {
    const { values, positionals, tokens } = parseArgs({
      args,
      allowPositionals: true,
      options,
      tokens: true,
    });
    const given = tokens.flatMap((t) => t.kind === "option" ? [t.name] : []);
    return new CommandLine(values, positionals, given);
  } catch (err) {
    throw new UsageError((err as Error).message, { cause: err });
  }
}

/**
 * Refuse a flag the chosen command does not read (the line is parsed with
 * every command's flags, so another command's flag would otherwise pass
 * unnoticed).
 *
 * @param cl The parsed line.
 * @param o `name`: how the command is called, for the message; `command`:
 *   the command; `common`: the flags every command takes.
 * @throws {UsageError} Naming the first such flag.
 */
export function refuseForeignFlags<C>(
  cl: CommandLine,
  o: { name: string; command: Command<C>; common: Options },
): void {
  const { name, command, common } = o;
  const foreign = cl.given.find((f) =>
    !Object.hasOwn(command.options, f) && !Object.hasOwn(common, f)
  );
  if (foreign !== undefined) {
    throw new UsageError(
      `${name} does not take --${foreign} (its flags: ${
        Object.keys(command.options).map((f) => `--${f}`).join(", ") || "none"
      })`,
    );
  }
}
