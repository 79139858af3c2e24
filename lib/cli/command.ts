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
import { closestWord } from "./did_you_mean.ts";

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

/** Options of {@linkcode parseCommandLine}. */
export interface ParseOptions {
  /**
   * The flags of each command by its first word (an unknown flag is
   * matched against the typed command's flags for "did you mean").
   */
  commands?: Record<string, Options>;
  /** Flags every command takes. */
  common?: Options;
}

/**
 * Each command's own flags, by its first word (for
 * {@linkcode ParseOptions}).
 *
 * @param table The commands.
 * @returns Their flags.
 */
export function commandOptions<C>(
  table: CommandTable<C>,
): Record<string, Options> {
  return Object.fromEntries(
    Object.entries(table).map(([name, c]) => [name, c.options]),
  );
}

/**
 * Parse a command line with the flags of a whole table
 * ({@linkcode tableOptions}), an unknown flag matched against the typed
 * command's own.
 *
 * @param args The arguments (without the program).
 * @param o `table`: the commands; `common`: the flags every one takes.
 * @returns The command line.
 * @throws {UsageError} For an unknown flag (with the flag it most likely
 *   meant) or a flag without its value.
 */
export async function parseTableLine<C>(
  args: string[],
  o: { table: CommandTable<C>; common: Options },
): Promise<CommandLine> {
  return await parseCommandLine(args, tableOptions(o.table, o.common), {
    commands: commandOptions(o.table),
    common: o.common,
  });
}

/**
 * Parse a command line.
 *
 * @param args The arguments (without the program).
 * @param options The flags (see {@linkcode tableOptions}).
 * @param o The commands' own flags, for the message on an unknown flag.
 * @returns The command line.
 * @throws {UsageError} For an unknown flag (with the flag it most likely
 *   meant) or a flag without its value.
 */
export async function parseCommandLine(
  args: string[],
  options: Options,
  o: ParseOptions = {},
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
    const unknown = /^Unknown option '([^']+)'/.exec((err as Error).message);
    if (unknown) {
      throw new UsageError(unknownFlag(unknown[1], args, { options, ...o }), {
        cause: err,
      });
    }
    throw new UsageError((err as Error).message, { cause: err });
  }
}

/**
 * The command words at the start of a line (up to two), as far as they can
 * be told without parsing it (a usage error shows that command's help).
 *
 * @param args The arguments.
 * @returns The leading words that are not flags.
 */
export function commandWords(args: string[]): string[] {
  const words: string[] = [];
  for (const a of args) {
    if (a.startsWith("-") || words.length === 2) break;
    words.push(a);
  }
  return words;
}

/** What to say of an unknown flag: the flag meant, or the flags there are. */
function unknownFlag(
  typed: string,
  args: string[],
  o: ParseOptions & { options: Options },
): string {
  const word = commandWords(args)[0];
  const own =
    word !== undefined && o.commands && Object.hasOwn(o.commands, word)
      ? { ...o.commands[word], ...o.common }
      : o.options;
  const name = typed.replace(/^-+/, "").replace(/=.*$/, "");
  const long = Object.keys(own);
  const meant = typed.startsWith("--")
    ? closestWord(name, long)
    : Object.entries(own).find(([, spec]) => spec.short === name)?.[0] ?? null;
  if (meant) return `unknown flag ${typed}: did you mean --${meant}?`;
  return `unknown flag ${typed}: the command's flags are in its help (a value that starts with "-" goes after "--")`;
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
    const meant = closestWord(foreign, [
      ...Object.keys(command.options),
      ...Object.keys(common),
    ]);
    throw new UsageError(
      `${name} does not take --${foreign}${
        meant ? `: did you mean --${meant}?` : ""
      } (its flags: ${
        Object.keys(command.options).map((f) => `--${f}`).join(", ") || "none"
      })`,
    );
  }
}
