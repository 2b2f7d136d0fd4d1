/** Latency summaries and the per-call timer the suites share. */

export interface LatencySummary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of sorted values (`q` in 0..1). */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

/** Summary of a list of durations in milliseconds. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = sorted.reduce((sum, x) => sum + x, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    mean: sorted.length > 0 ? total / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/**
 * Time `fn` once per item with `process.hrtime.bigint()`, after running it on `warmup` items
 * (not recorded). Returns milliseconds per call, in item order.
 */
export async function timeEach<T>(items: readonly T[], fn: (item: T) => Promise<unknown>, warmup: readonly T[] = []): Promise<number[]> {
  for (const item of warmup) await fn(item);
  const out: number[] = [];
  for (const item of items) {
    const start = process.hrtime.bigint();
    await fn(item);
    out.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return out;
}

/** Round for display and JSON: 3 significant decimals for small figures. */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
