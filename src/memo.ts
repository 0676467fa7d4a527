/** The value kept for `key`, made by `make` the first time it is asked for (see `memoised`). */
export function memoisedOn<K extends object, V>(cache: WeakMap<K, V>, key: K, make: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    cache.set(key, value);
  }
  return value;
}

/**
 * The value kept for `first` then `second`, made by `make` the first time it is asked for: a
 * cache of what depends only on a shared object (a route table, a selection) and one more key.
 * The outer level is a WeakMap, so what the object no longer names is collected with it.
 */
export function memoised<K extends object, S, V>(
  cache: WeakMap<K, Map<S, V>>,
  first: K,
  second: S,
  make: () => V,
): V {
  const inner = memoisedOn(cache, first, () => new Map<S, V>());
  let value = inner.get(second);
  if (value === undefined) {
    value = make();
    inner.set(second, value);
  }
  return value;
}
