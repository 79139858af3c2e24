/**
 * {@linkcode Lru}: a map bounded in entries that forgets its least recently
 * used ones first (the conversation book's indexes by response id, call and
 * episode).
 *
 * @module
 */

/** A map that forgets its least recently used entries. */
export class Lru<V> {
  readonly #map = new Map<string, V>();
  readonly #cap: number;
  /**
   * Create an `Lru`.
   *
   * @param cap Entries kept at most.
   */
  constructor(cap: number) {
    this.#cap = cap;
  }
  /**
   * The value of a key, now the most recently used.
   *
   * @param k The key.
   * @returns Its value, if kept.
   */
  get(k: string): V | undefined {
    const v = this.#map.get(k);
    if (v !== undefined) {
      this.#map.delete(k);
      this.#map.set(k, v);
    }
    return v;
  }
  /**
   * Whether a key is kept (its use unchanged).
   *
   * @param k The key.
   * @returns True when kept.
   */
  has(k: string): boolean {
    return this.#map.has(k);
  }
  /**
   * Keep a value as the most recently used, forgetting the least recently
   * used past the bound.
   *
   * @param k The key.
   * @param v The value.
   */
  set(k: string, v: V): void {
    this.#map.delete(k);
    this.#map.set(k, v);
    while (this.#map.size > this.#cap) {
      this.#map.delete(this.#map.keys().next().value as string);
    }
  }
  /**
   * Forget a key.
   *
   * @param k The key.
   * @returns True when it was kept.
   */
  delete(k: string): boolean {
    return this.#map.delete(k);
  }
  /** Entries kept. */
  get size(): number {
    return this.#map.size;
  }
}
