import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { BenchReport } from '../../bench-report.js';
import { CairnError, invalid } from '../../errors.js';
import type { Run } from './memory.js';

/**
 * What `cairn bench` uses of the benchmarks. They live in the repository's `bench/` workspace
 * (package `cairn-bench`), not in the published package: the command loads them when present.
 */
export interface BenchWorkspace {
  SUITES: ReadonlyArray<{ name: string; planned?: boolean }>;
  /** Throws a user error for an unknown suite name. */
  selectSuites(name: string): unknown;
  runBench(options: {
    suite: string;
    quick: boolean;
    seed: number;
    sizes: number[] | null;
    dataDir: string;
    cacheDir: string;
    command: string;
    log: (line: string) => void;
  }): Promise<BenchReport>;
  formatReport(report: BenchReport): string[];
  writeDocs(report: BenchReport, path: string): string[];
}

/** The package name of the benchmarks workspace. */
export const BENCH_PACKAGE = 'cairn-bench';

/** Why `cairn bench` cannot run here, said to the user. */
export const BENCH_ABSENT =
  'benchmarks run from a clone of the repository (they are not part of the published package): ' +
  'git clone the cairn repository, then `npm install && npm run build` and `node bin/cairn.js bench <suite>` there';

/** The built workspace beside this file in a clone (dist/cli/commands → the repository root). */
const BENCH_IN_CLONE = new URL('../../../bench/dist/index.js', import.meta.url);

const missing = (error: unknown, what: string): boolean =>
  (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && error instanceof Error && error.message.includes(what);

/**
 * Load the benchmarks workspace, or say why it cannot run here: absent (an installed package)
 * or present but not built. It is found as the package `cairn-bench` (npm links the workspace
 * into node_modules), else in the clone beside this file (a node_modules from before the
 * workspace existed). A workspace that fails to load for another reason is a real error.
 */
export async function loadBenchWorkspace(specifier: string = BENCH_PACKAGE, inClone: URL = BENCH_IN_CLONE): Promise<BenchWorkspace | string> {
  try {
    return (await import(specifier)) as BenchWorkspace;
  } catch (error) {
    if (!missing(error, `'${specifier}'`) && !missing(error, fileURLToPath(inClone))) throw error;
  }
  if (existsSync(fileURLToPath(inClone))) return (await import(inClone.href)) as BenchWorkspace;
  if (existsSync(fileURLToPath(new URL('../package.json', inClone)))) return 'the benchmarks workspace is not built: run `npm run build` in the repository';
  return BENCH_ABSENT;
}

interface BenchOptions {
  quick?: boolean;
  data?: string;
  seed: number;
  sizes?: number[];
  out?: string;
  writeDocs?: string | boolean;
}

function seedOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw invalid(`--seed must be an integer from 0 to 4294967295 (got "${value}")`, 'seed');
  return n;
}

function sizesOf(value: string): number[] {
  const sizes = value.split(',').map((s) => s.trim().replaceAll('_', '')).filter(Boolean).map((s) => {
    const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(s);
    const n = m ? Number(m[1]) * (m[2] === '' ? 1 : /k/i.test(m[2] as string) ? 1e3 : 1e6) : Number.NaN;
    if (!Number.isInteger(n) || n < 1) throw invalid(`--sizes must be positive integers like 10000,100000 or 10K,1M (got "${s}")`, 'sizes');
    return n;
  });
  if (sizes.length === 0) throw invalid('--sizes is empty', 'sizes');
  return sizes;
}

/** The command that reproduces a run (without --home, which is machine-specific). */
function canonicalCommand(suite: string, opts: BenchOptions, json: boolean): string {
  const parts = ['cairn bench', suite];
  if (opts.quick) parts.push('--quick');
  if (opts.seed !== 42) parts.push(`--seed ${opts.seed}`);
  if (opts.sizes) parts.push(`--sizes ${opts.sizes.join(',')}`);
  if (opts.data) parts.push(`--data ${opts.data}`);
  if (opts.writeDocs) parts.push(typeof opts.writeDocs === 'string' ? `--write-docs ${opts.writeDocs}` : '--write-docs');
  if (json) parts.push('--json');
  return parts.join(' ');
}

/** Write each suite's result that ran (not skipped) to `<dir>/<suite>.json`, with the run's environment. */
function saveLatest(dir: string, report: BenchReport): void {
  mkdirSync(dir, { recursive: true });
  for (const result of report.results) {
    if (result.status !== 'ok') continue;
    writeFileSync(join(dir, `${result.suite}.json`), `${JSON.stringify({ ...report, results: [result] }, null, 2)}\n`);
  }
}

/** Register `cairn bench`; `bench` is the loaded workspace, or why benchmarks cannot run here. */
export function registerBenchCommand(program: Command, run: Run, bench: BenchWorkspace | string): void {
  const suites =
    typeof bench === 'string'
      ? `Not available here: ${bench}.\n`
      : `Suites: ${bench.SUITES.map((s) => (s.planned ? `${s.name} (not yet implemented)` : s.name)).join(', ')}.\n`;
  run(
    program
      .command('bench')
      .summary('run benchmarks (SPEC §9) and print figures against their targets')
      .description(
        'Run one benchmark suite, or all of them. Results are self-describing (command, commit, machine, Node, datasets and their hashes).\n' +
          suites +
          'Synthetic corpora are built once and cached under <home>/bench-cache/.',
      )
      .argument('<suite>', 'a suite name, or "all"')
      .option('--quick', 'tiny sizes and few iterations (for CI)')
      .option('--data <dir>', 'folder with the shared datasets (default: $CAIRN_BENCH_DATA, else ../shared/data)')
      .option('--seed <n>', 'seed of the synthetic corpus', seedOf, 42)
      .option('--sizes <list>', 'corpus sizes, comma-separated (default 10000,100000; with --quick 10000; 1M only when listed)', sizesOf)
      .option('--out <file>', 'also write the JSON results to this file')
      .option('--write-docs [file]', 'regenerate the benchmarks page from this run (default docs/BENCHMARKS.md)')
      .addHelpText('after', '\nExamples:\n  cairn bench recall\n  cairn bench all --quick --json\n  cairn bench recall --sizes 10000,100000,1000000\n  cairn bench all --write-docs'),
    async (ctx, suite: string, opts: BenchOptions) => {
      if (typeof bench === 'string') throw new CairnError('MISSING_DEPENDENCY', bench);
      const { formatReport, runBench, selectSuites, writeDocs } = bench;
      selectSuites(suite); // an unknown name fails here, before any work
      const dataDir = resolve(ctx.io.cwd, opts.data ?? ctx.io.env.CAIRN_BENCH_DATA ?? '../shared/data');
      const report = await runBench({
        suite,
        quick: opts.quick === true,
        seed: opts.seed,
        sizes: opts.sizes ?? null,
        dataDir,
        cacheDir: join(ctx.config.home, 'bench-cache'),
        command: canonicalCommand(suite, opts, ctx.json),
        log: (line) => ctx.note(line),
      });
      // The latest result of each suite stays under the home, where `cairn ui` shows recall quality from.
      saveLatest(join(ctx.config.home, 'bench', 'results'), report);
      if (opts.out) {
        const out = resolve(ctx.io.cwd, opts.out);
        mkdirSync(dirname(out), { recursive: true });
        writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
      }
      if (opts.writeDocs) {
        const docs = resolve(ctx.io.cwd, typeof opts.writeDocs === 'string' ? opts.writeDocs : 'docs/BENCHMARKS.md');
        mkdirSync(dirname(docs), { recursive: true });
        writeDocs(report, docs);
        ctx.note(`wrote ${docs}`);
      }
      if (ctx.json) ctx.printJson(report);
      else for (const line of formatReport(report)) ctx.out(line);
      const failed = report.results.filter((r) => r.status === 'failed');
      if (failed.length > 0) {
        throw new CairnError('INTERNAL', `bench: ${failed.map((r) => `${r.suite} failed: ${r.reason ?? ''}`).join('; ')}`);
      }
    },
  );
}
