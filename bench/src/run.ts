/** Run the selected suites and assemble the self-describing report. */
import { loadavg } from 'node:os';
import { runEnv } from './env.js';
import { selectSuites, SUITES } from './registry.js';
import type { BenchContext, BenchReport, Suite, SuiteResult } from './types.js';

/** Corpus sizes when `--sizes` is not given. 1M runs only when asked for (it takes long to build). */
export const DEFAULT_SIZES = [10_000, 100_000] as const;
export const QUICK_SIZES = [10_000] as const;

export interface BenchRunOptions {
  /** A suite name or `all`. */
  suite: string;
  quick: boolean;
  seed: number;
  /** Null for the defaults (see DEFAULT_SIZES, QUICK_SIZES). */
  sizes: number[] | null;
  dataDir: string;
  cacheDir: string;
  /** The canonical command line recorded in every result. */
  command: string;
  log: (line: string) => void;
  /** @default the registry */
  suites?: readonly Suite[];
}

function oneMinuteLoad(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

export async function runBench(options: BenchRunOptions): Promise<BenchReport> {
  const suites = selectSuites(options.suite, options.suites ?? SUITES);
  const sizes = options.sizes ?? [...(options.quick ? QUICK_SIZES : DEFAULT_SIZES)];
  const env = runEnv(options.command);
  const ctx: BenchContext = {
    quick: options.quick,
    seed: options.seed,
    sizes,
    dataDir: options.dataDir,
    cacheDir: options.cacheDir,
    log: options.log,
  };
  const results: SuiteResult[] = [];
  for (const suite of suites) {
    const started = process.hrtime.bigint();
    const loadStart = oneMinuteLoad();
    const base = { suite: suite.name, description: suite.description, env, datasets: [], metrics: [], details: {} };
    let result: Omit<SuiteResult, 'load'>;
    try {
      const outcome = await suite.run(ctx);
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      result =
        outcome.status === 'ok'
          ? { ...base, status: 'ok', reason: null, datasets: outcome.datasets, metrics: outcome.metrics, details: outcome.details ?? {}, durationMs }
          : { ...base, status: 'skipped', reason: outcome.reason, datasets: outcome.datasets ?? [], durationMs };
    } catch (error) {
      // One broken suite must not hide the others' figures; the command exits non-zero at the end.
      const message = error instanceof Error ? error.message : String(error);
      result = { ...base, status: 'failed', reason: message, durationMs: Number(process.hrtime.bigint() - started) / 1e6 };
    }
    results.push({ ...result, load: { start: loadStart, end: oneMinuteLoad() } });
  }
  return {
    schema: 'cairn-bench/1',
    env,
    options: { suites: suites.map((s) => s.name), quick: options.quick, seed: options.seed, sizes, data: options.dataDir },
    results,
  };
}
