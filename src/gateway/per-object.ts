/**
 * `derive(key)` worked out once per key object and kept as long as the key lives. The request
 * path uses it for what follows from a route target (targets live until the registry changes
 * and is rebuilt): its candidate, the adapter's view of it, an adapter's request facts.
 */
export function perObject<K extends object, V>(derive: (key: K) => V): (key: K) => V {
  const cache = new WeakMap<K, V>();
  return (key) => {
    let v = cache.get(key);
    if (v === undefined) {
      v = derive(key);
      cache.set(key, v);
    }
    return v;
  };
}
