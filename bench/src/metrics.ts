/** Building the rows of a suite's table: a figure, its target and anchor, pass or fail. */
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome, Target } from './types.js';
import { round } from './stats.js';

export function metric(
  name: string,
  value: number | null,
  unit: string,
  options: { target?: Target | null; anchor?: string | null; note?: string } = {},
): Metric {
  const target = options.target ?? null;
  const finite = value !== null && Number.isFinite(value) ? round(value) : null;
  let pass: boolean | null = null;
  if (target && finite !== null) pass = target.op === '<=' ? finite <= target.value : finite >= target.value;
  return {
    name,
    value: finite,
    unit,
    target,
    anchor: options.anchor ?? null,
    pass,
    ...(options.note ? { note: options.note } : {}),
  };
}

export const atMost = (value: number): Target => ({ op: '<=', value });
export const atLeast = (value: number): Target => ({ op: '>=', value });

/** 10000 → 10K, 1000000 → 1M. */
export function sizeLabel(size: number): string {
  if (size >= 1_000_000 && size % 1_000_000 === 0) return `${size / 1_000_000}M`;
  if (size >= 1000 && size % 1000 === 0) return `${size / 1000}K`;
  return String(size);
}

/** Measures one corpus size, adding its datasets and metrics; returns that size's details. */
export type SizeRun = (ctx: BenchContext, size: number, datasets: Dataset[], metrics: Metric[]) => Promise<Record<string, unknown>>;

/** A suite that runs `runSize` for each of the context's corpus sizes; details are keyed by size label. */
export function sizedSuite(name: string, description: string, runSize: SizeRun): Suite {
  return {
    name,
    description,
    async run(ctx): Promise<SuiteOutcome> {
      const datasets: Dataset[] = [];
      const metrics: Metric[] = [];
      const bySize: Record<string, unknown> = {};
      for (const size of ctx.sizes) bySize[sizeLabel(size)] = await runSize(ctx, size, datasets, metrics);
      return { status: 'ok', datasets, metrics, details: { bySize } };
    },
  };
}
