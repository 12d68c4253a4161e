/**
 * A map with a fixed maximum size that forgets its least recently used entry first. A Map iterates in
 * insertion order, so re-inserting on every read keeps the oldest entry first in line for eviction.
 */
export class LruCache<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new Error(`an LRU cache holds at least 1 entry, got ${max}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key) as V;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  getOrCreate(key: K, create: () => V): V {
    if (this.#entries.has(key)) return this.get(key) as V;
    const value = create();
    this.set(key, value);
    return value;
  }

  /** Keys from least to most recently used (for tests and diagnostics; reading them changes nothing). */
  keys(): K[] {
    return [...this.#entries.keys()];
  }
}
