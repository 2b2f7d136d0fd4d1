/**
 * The format of a benchmark result file (`cairn bench … --json`, `<home>/bench/results/<suite>.json`):
 * written by the benchmarks (the repository's `bench/` workspace), read by the memory browser's
 * overview. Self-describing: command, commit, machine, Node, datasets with their hashes, date.
 */

/** Where and how a run happened, recorded in every result. */
export interface RunEnv {
  /** The command that reproduces this run (canonical form, without `--home`). */
  command: string;
  /** Commit of the cairn checkout that ran, or null when not in a git checkout. */
  commit: string | null;
  /** True when tracked files differed from `commit` (the figures are of uncommitted code). */
  dirty: boolean | null;
  machine: {
    cpu: string;
    cores: number;
    memoryBytes: number;
    platform: string;
    arch: string;
    /** 1, 5 and 15 minute load averages when the run started: other work on the machine skews timings. */
    loadAverage: number[];
  };
  node: string;
  /** ISO 8601 start time. */
  date: string;
}

/** A synthetic or on-disk dataset a suite measured on. */
export interface Dataset {
  name: string;
  /** sha256 of the dataset's content (for synthetic corpora: over the generated memories). */
  sha256: string | null;
  /** For synthetic corpora: what regenerates it exactly. */
  generator: { version: string; seed: number; size: number; queries: number } | null;
  /** For data read from disk: where it came from (the `Source:` line of its PROVENANCE.md). */
  source?: string;
  /** Time to build the corpus database in this run, or null when it came from the cache. */
  buildMs: number | null;
  /** Time the cached build took when it was made. */
  cachedBuildMs: number | null;
}

export interface Target {
  op: '<=' | '>=';
  value: number;
}

/** One figure in a suite's table. */
export interface Metric {
  /** e.g. `recall p50 @100K (touch)` */
  name: string;
  value: number | null;
  unit: string;
  /** The SPEC §9 target this figure is judged against, when it has one. */
  target: Target | null;
  /** The comparison point from SPEC §9, as text. */
  anchor: string | null;
  /** Against the target; null when there is no target or no value. */
  pass: boolean | null;
  note?: string;
}

export type SuiteStatus = 'ok' | 'skipped' | 'failed';

export interface SuiteResult {
  suite: string;
  description: string;
  status: SuiteStatus;
  /** Why the suite was skipped or failed; null when it ran. */
  reason: string | null;
  env: RunEnv;
  datasets: Dataset[];
  metrics: Metric[];
  /** Raw figures (full latency summaries, per-size breakdowns) beyond the table. */
  details: Record<string, unknown>;
  durationMs: number;
  /** 1-minute load average when the suite started and ended (timings under load are slower). */
  load: { start: number; end: number };
}

export interface BenchReport {
  /** Format of this document. */
  schema: 'cairn-bench/1';
  env: RunEnv;
  options: { suites: string[]; quick: boolean; seed: number; sizes: number[]; data: string };
  results: SuiteResult[];
}
