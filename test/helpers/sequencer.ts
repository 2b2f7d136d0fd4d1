/**
 * Test file order for `vitest run`: the files known to take longest start first, so that with
 * two or more workers no long file is left running alone at the end (longest-first packing).
 * With vitest's results cache present (a second local run) its measured order wins; a clean clone,
 * as in CI, has no cache, and vitest would then start the largest files by size first, which
 * leaves small but slow files (test/store/concurrency.test.ts: 93 lines, ~50 s) for the tail.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files of a full run, longest first: seconds at one worker in the fresh-clone CI run
 * of 2026-11-26 (load ~1.5), then files that took 30-45 s in a one-worker run at load 10-17.
 */
export const SLOW_FIRST: readonly string[] = [
  'test/store/concurrency.test.ts', // 50
  'test/reliability/crash.test.ts', // 46
  'test/e2e/claude.test.ts', // 38.5
  'test/store/postgres.test.ts', // 29
  'test/web/first-hour.test.ts', // 28
  'test/reliability/load.test.ts', // 24
  'test/serve/multi-writer.test.ts', // 19.6
  'test/store/postgres-substrate.test.ts', // 18
  'test/web/browser.test.ts', // 12
  'test/bench/peers.test.ts', // 11.7
  'test/store/sqlite-ann.test.ts', // 11.3
  'test/store/postgres-copy.test.ts', // 45 at load 10-17
  'test/serve/serve.test.ts', // 41 at load 10-17
  'test/ledger/ledger.test.ts', // 39 at load 10-17
];

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const measured = await super.sort(files);
    const cache = this.ctx.cache;
    const key = (f: TestSpecification) => `${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`;
    // A previous run's durations are better than this list: keep vitest's order then.
    if (files.every((f) => cache.getFileTestResults(key(f)))) return measured;
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(relative(this.ctx.config.root, f.moduleId).split('\\').join('/'));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    return [...measured].sort((a, b) => rank(a) - rank(b));
  }
}
