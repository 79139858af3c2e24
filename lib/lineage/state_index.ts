/**
 * {@linkcode StateIndex}: the state of an episode as it grows step by step,
 * with primitive values (and identifier words and tokens inside strings)
 * indexed once when they are added, so looking up an argument is a map
 * access instead of a walk. When the caller knows every value it will look
 * up (normalization does: the arguments of the whole episode), it passes
 * them as `wanted` and only those are recorded.
 *
 * @module
 */
import {
  comparePaths,
  DEFAULT_MAX_DEPTH,
  stateVariables,
  symbolicVariants,
} from "./find_source.ts";
import {
  isMeaningful,
  isTextDatum,
  subTokens,
  tokenize,
  words,
} from "./meaningful.ts";
import { formatPath, type PathSegment } from "./paths.ts";

const PLAIN = /^[A-Za-z0-9_-]*$/;

/** Options of {@linkcode StateIndex}. */
export interface StateIndexOptions {
  /**
   * Search depth below each top-level key.
   * @default 6
   */
  maxDepth?: number;
  /** Only these values are indexed (all values when absent). */
  wanted?: ReadonlySet<string | number> | null;
}

/** An incrementally built value → paths index. */
export class StateIndex {
  readonly #state: Record<string, unknown> = {};
  readonly #maxDepth: number;
  readonly #wanted: ReadonlySet<string | number> | null;
  readonly #hits = new Map<string | number, PathSegment[][]>();
  readonly #stack: PathSegment[] = [];
  #allWords = false;

  /**
   * Create a `StateIndex`.
   *
   * @param options Depth and the wanted values.
   */
  constructor(options: StateIndexOptions = {}) {
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.#wanted = options.wanted ?? null;
  }

  /** The state so far (top-level key → value). */
  get state(): Record<string, unknown> {
    return this.#state;
  }

  #hit(value: string | number): void {
    if (this.#wanted !== null && !this.#wanted.has(value)) return;
    const list = this.#hits.get(value);
    const path = this.#stack.slice();
    if (list) list.push(path);
    else this.#hits.set(value, [path]);
  }

  #walk(value: unknown, depth: number): void {
    if (typeof value === "string") {
      this.#hit(value);
      if (PLAIN.test(value)) return; // no inner words or tokens, no JSON
      if (depth > 0 && /^\s*[[{]/.test(value)) {
        try {
          const parsed = JSON.parse(value);
          if (typeof parsed === "object" && parsed !== null) {
            this.#stack.push({ json: true });
            this.#walk(parsed, depth - 1);
            this.#stack.pop();
          }
        } catch { /* not JSON */ }
      }
      const seen = new Set<string>([value]);
      for (const w of words(value)) {
        const wanted = this.#allWords
          ? isMeaningful(w.text)
          : isTextDatum(w.text);
        if (!seen.has(w.text) && wanted) {
          seen.add(w.text);
          this.#stack.push({ word: w.index });
          this.#hit(w.text);
          this.#stack.pop();
        }
      }
      for (const t of tokenize(value)) {
        if (!seen.has(t.text) && isTextDatum(t.text)) {
          seen.add(t.text);
          this.#stack.push({ token: t.index });
          this.#hit(t.text);
          this.#stack.pop();
        }
      }
      for (const t of subTokens(value)) {
        if (!seen.has(t.text)) {
          seen.add(t.text);
          this.#stack.push({ span: [t.start, t.start + t.text.length] });
          this.#hit(t.text);
          this.#stack.pop();
        }
      }
      return;
    }
    if (typeof value === "number") {
      this.#hit(value);
      return;
    }
    if (depth <= 0 || typeof value !== "object" || value === null) return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        this.#stack.push({ index: i });
        this.#walk(value[i], depth - 1);
        this.#stack.pop();
      }
    } else {
      for (const k in value) {
        if (!Object.hasOwn(value, k)) continue;
        this.#stack.push({ key: k });
        this.#walk((value as Record<string, unknown>)[k], depth - 1);
        this.#stack.pop();
      }
    }
  }

  /**
   * Add a top-level store (a step's result, the task input) and index it.
   *
   * @param key Store name.
   * @param value Its value.
   */
  add(key: string, value: unknown): void {
    this.#state[key] = value;
    // An integer store is a variable, not a source.
    if (typeof value === "number" && Number.isInteger(value)) return;
    this.#stack.length = 0;
    this.#stack.push({ key });
    this.#walk(value, this.#maxDepth);
    this.#stack.length = 0;
  }

  /**
   * Add one user message as `<key>.user[<k>]` (the key's object gains a
   * `user` list). Every meaningful word of the message is indexed, plain
   * words too: people give names, cities and choices in words, and a whole
   * argument equal to one of them came from them.
   *
   * @param key Top-level key (`input`).
   * @param k Position of the message among the user's messages.
   * @param text The message.
   */
  addUserMessage(key: string, k: number, text: string): void {
    // New objects: states handed out earlier keep what they held.
    const holder = (this.#state[key] ?? {}) as Record<string, unknown>;
    const list = [...((holder.user as string[] | undefined) ?? [])];
    list[k] = text;
    this.#state[key] = { ...holder, user: list, latest: text };
    this.#stack.length = 0;
    this.#stack.push({ key }, { key: "user" }, { index: k });
    this.#allWords = true;
    try {
      this.#walk(text, this.#maxDepth);
    } finally {
      this.#allWords = false;
      this.#stack.length = 0;
    }
  }

  /**
   * Every path holding this primitive value, best first.
   *
   * @param value A string or number (one of `wanted`, when given).
   * @returns Paths (with symbolic-index variants for integer variables).
   */
  lookup(value: unknown): string[] {
    if (typeof value !== "string" && typeof value !== "number") return [];
    const paths = this.#hits.get(value);
    if (!paths) return [];
    const vars = stateVariables(this.#state);
    const out = new Set<string>();
    for (const segs of paths) {
      out.add(formatPath(segs));
      if (vars.size) {
        for (const sym of symbolicVariants(segs, vars)) {
          out.add(formatPath(sym));
        }
      }
    }
    return [...out].sort(comparePaths);
  }
}
