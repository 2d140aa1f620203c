/**
 * A small map whose entries live `ttlMs`. Used for credential lookups on the request path:
 * the TTL bounds how long a change made on another instance can go unseen, and local
 * changes call `clear()`/`delete()` so they apply at once here.
 */
export class TtlCache<K, V> {
  private readonly map = new Map<K, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K): V | undefined {
    return this.entry(key)?.value;
  }

  /** The live entry with its expiry (ms since the epoch), for callers that refresh ahead. */
  entry(key: K): { readonly value: V; readonly until: number } | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (e.until <= Date.now()) {
      this.map.delete(key);
      return undefined;
    }
    return e;
  }

  set(key: K, value: V): void {
    if (this.ttlMs <= 0) return;
    // A rewritten key moves to the end, so a full cache evicts the least recently written one
    // (never a key refreshed all the time), and overwriting evicts nothing.
    if (!this.map.delete(key) && this.map.size >= this.maxEntries)
      this.map.delete(this.map.keys().next().value as K);
    this.map.set(key, { value, until: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}
