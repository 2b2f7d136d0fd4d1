/**
 * The contracts of `cairn bench`: a suite is `{ name, description, run(ctx) }`; its result is
 * self-describing (command, commit, machine, Node, datasets with their hashes, date). The result
 * format itself is cairn's (`cairn-memory`), since the memory browser reads it.
 */
import type { BenchDataset as Dataset, BenchMetric as Metric } from 'cairn-memory';

export type {
  BenchReport,
  BenchDataset as Dataset,
  BenchMetric as Metric,
  BenchRunEnv as RunEnv,
  BenchSuiteResult as SuiteResult,
  BenchSuiteStatus as SuiteStatus,
  BenchTarget as Target,
} from 'cairn-memory';

/** What a suite's `run` returns; the runner adds the name, timing and environment. */
export type SuiteOutcome =
  | { status: 'ok'; datasets: Dataset[]; metrics: Metric[]; details?: Record<string, unknown> }
  | { status: 'skipped'; reason: string; datasets?: Dataset[] };

/** What a suite gets to run with. */
export interface BenchContext {
  quick: boolean;
  seed: number;
  /** Corpus sizes to measure at. */
  sizes: number[];
  /** Folder with the shared datasets (SPEC §9: `../shared/data`). */
  dataDir: string;
  /** Where built corpora are cached (`<home>/bench-cache`). */
  cacheDir: string;
  /** Progress for humans (stderr); never part of the results. */
  log(line: string): void;
}

export interface Suite {
  name: string;
  description: string;
  /** A SPEC §9 suite that has no implementation yet: it reports `skipped`, never numbers. */
  planned?: boolean;
  run(ctx: BenchContext): Promise<SuiteOutcome>;
}
