/**
 * Whether the user mentioned a name: word stems of what the user wrote,
 * matched against the words of a name.
 *
 * @module
 */

function stem(word: string): string {
  return word.replace(/(es|s)$/, "");
}

/**
 * The stems of every word of 4 letters or more the user wrote (lower
 * case, a plural `s`/`es` dropped).
 *
 * @param state The conversation so far.
 * @returns The stems.
 */
export function mentionStems(state: { user: string[] }): Set<string> {
  const out = new Set<string>();
  for (const text of state.user) addMentionStems(out, text);
  return out;
}

/**
 * Add the stems of one more user message to a set of
 * {@linkcode mentionStems} (an engine keeps them as messages arrive).
 *
 * @param stems The stems so far (changed in place).
 * @param text The message.
 */
export function addMentionStems(stems: Set<string>, text: string): void {
  for (const w of text.toLowerCase().match(/[a-z]{4,}/g) ?? []) {
    stems.add(stem(w));
  }
}

/**
 * Whether the user mentioned a name: a word of it (4 letters or more)
 * whose stem the user wrote, or that contains, or is contained in, such a
 * stem of at least 5 letters (`watch` and `Wristwatch`).
 *
 * @param text A name (`Water Bottle`).
 * @param stems {@linkcode mentionStems} of the conversation.
 * @returns True when mentioned.
 */
export function isMentioned(text: string, stems: Set<string>): boolean {
  for (const w of text.toLowerCase().match(/[a-z]{4,}/g) ?? []) {
    const s = stem(w);
    if (stems.has(s)) return true;
    for (const u of stems) {
      if (u.length >= 5 && s.length >= 5 && (s.includes(u) || u.includes(s))) {
        return true;
      }
    }
  }
  return false;
}
