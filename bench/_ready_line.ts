/**
 * A started process's ready line: its stdout read until a line matches,
 * the rest then read on in the background so the pipe never fills.
 *
 * @module
 */

/** What {@linkcode readyLine} found. */
export interface ReadyLine {
  /** The ready line's match. */
  match: RegExpExecArray;
  /** The rest of stdout after the match, once the process closes it. */
  tail: Promise<string>;
}

/** Options of {@linkcode readyLine}. */
export interface ReadyLineOptions {
  /**
   * Start of the error's message when stdout closes before the line.
   *
   * @default "process exited before ready"
   */
  exited?: string;
}

/**
 * Read a process's stdout until `pattern` matches what it printed.
 *
 * @param stdout The process's piped stdout.
 * @param pattern The ready line.
 * @param options The error's message.
 * @returns The match, and the rest of stdout read on in the background.
 * @throws {Error} When stdout closes before the ready line.
 */
export async function readyLine(
  stdout: ReadableStream<Uint8Array>,
  pattern: RegExp,
  options: ReadyLineOptions = {},
): Promise<ReadyLine> {
  const reader = stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      throw new Error(
        `${options.exited ?? "process exited before ready"}: ${text}`,
      );
    }
    text += value;
    const match = pattern.exec(text);
    if (match) {
      const tail = (async () => {
        let rest = text.slice(match.index + match[0].length);
        for (;;) {
          const r = await reader.read();
          if (r.done) return rest;
          rest += r.value;
        }
      })();
      return { match, tail };
    }
  }
}
