/** Percentile of sorted-on-demand samples (nearest rank). */
export function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

export function summary(samples) {
  return {
    n: samples.length,
    p50: round(percentile(samples, 50), 3),
    p99: round(percentile(samples, 99), 3),
  };
}

/**
 * Runs each path's calls in blocks, in a rotating order, so that machine drift hits all alike.
 * A path that has used up `maxSecondsPerPath` stops early (its samples say how many it made):
 * a pathologically slow path must not hold the whole run hostage.
 */
export async function interleaved(
  paths,
  { calls, block, maxSecondsPerPath = Number.POSITIVE_INFINITY },
) {
  const samples = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
  const spent = Object.fromEntries(Object.keys(paths).map((name) => [name, 0]));
  const names = Object.keys(paths);
  for (let round = 0; round * block < calls; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      if (spent[name] > maxSecondsPerPath * 1000) continue;
      for (let i = 0; i < block; i++) {
        const started = process.hrtime.bigint();
        await paths[name]();
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        samples[name].push(ms);
        spent[name] += ms;
      }
    }
  }
  return samples;
}
