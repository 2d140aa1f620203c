/**
 * A map keyed by a short path of keys, one Map per level. The request path looks series up by
 * strings that are mostly the same string objects every time (route templates, a target's model
 * id, literal endpoint names), whose hashes V8 keeps once computed; one joined key would be a new
 * string to flatten and hash on every request.
 */
export class KeyTree<V> {
  private readonly root = new Map<unknown, unknown>();
  /** Leaves stored. */
  size = 0;

  /** `limit`: leaves `take` keeps at most (a bound on what client-chosen keys can grow). */
  constructor(private readonly limit = Number.POSITIVE_INFINITY) {}

  /**
   * The value under the path, made by `make(a, b, c, d)` the first time and kept (made anew each
   * time once `limit` leaves are stored). `make` gets the keys, so it needs no closure per call.
   */
  take<A, B, C, D>(make: (a: A, b: B, c: C, d: D) => V, a: A, b: B, c: C, d?: D): V {
    let v = this.get(a, b, c, d);
    if (v === undefined) {
      v = make(a, b, c, d as D);
      if (this.size < this.limit) this.set(v, a, b, c, d);
    }
    return v;
  }

  get(a: unknown, b: unknown, c: unknown, d?: unknown): V | undefined {
    const m1 = this.root.get(a) as Map<unknown, unknown> | undefined;
    const m2 = m1?.get(b) as Map<unknown, unknown> | undefined;
    const m3 = m2?.get(c);
    return (d === undefined ? m3 : (m3 as Map<unknown, unknown> | undefined)?.get(d)) as V | undefined;
  }

  set(value: V, a: unknown, b: unknown, c: unknown, d?: unknown): void {
    const m1 = level(this.root, a);
    const m2 = level(m1, b);
    const before = d === undefined ? m2.has(c) : level(m2, c).has(d);
    if (d === undefined) m2.set(c, value);
    else level(m2, c).set(d, value);
    if (!before) this.size++;
  }
}

function level(m: Map<unknown, unknown>, k: unknown): Map<unknown, unknown> {
  let next = m.get(k) as Map<unknown, unknown> | undefined;
  if (!next) {
    next = new Map();
    m.set(k, next);
  }
  return next;
}
