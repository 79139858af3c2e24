/**
 * {@linkcode ToolsetDigests}: the digest that tells a request's toolset
 * from the ones its episode was shown (`toolset.exposed` once per toolset),
 * the SHA-256 of the tools' canonical JSON, remembered by the tools' plain
 * JSON text: an agent sends the same tools with every request, and their
 * plain text costs one native pass where the canonical form sorts every
 * object first (Claude Code's tools are ~100 KB, in every request).
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Hex } from "../trace/hash.ts";

/** Toolsets remembered at most (past it, the memory starts again empty). */
const MAX_TOOLSETS = 32;

/** Characters of tools' text remembered at most, all toolsets together. */
const MAX_CHARS = 4 * 1024 * 1024;

/** The digests of toolsets met lately, by their plain JSON text. */
export class ToolsetDigests {
  #byText = new Map<string, string>();
  #chars = 0;

  /**
   * The digest of a toolset: hex SHA-256 of its canonical JSON (the same
   * tools in any key order give the same digest).
   *
   * @param tools The tools, as the request's wire reader gave them.
   * @returns 64 hex characters.
   * @throws {TypeError} When the tools hold something JSON cannot express.
   */
  digest(tools: unknown): string {
    // The same plain text is the same value, so the same canonical form
    // (tools read from a JSON body hold nothing the canonical form
    // rejects and plain JSON writes as null: NaN, undefined in a list).
    const text = JSON.stringify(tools);
    const known = this.#byText.get(text);
    if (known !== undefined) return known;
    const digest = sha256Hex(canonicalJson(tools));
    if (text.length <= MAX_CHARS) {
      if (
        this.#byText.size >= MAX_TOOLSETS ||
        this.#chars + text.length > MAX_CHARS
      ) {
        this.#byText.clear();
        this.#chars = 0;
      }
      this.#byText.set(text, digest);
      this.#chars += text.length;
    }
    return digest;
  }
}
