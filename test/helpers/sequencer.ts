/**
 * Test file order for `vitest run`. With two or more workers (vitest.config.ts):
 * - the files known to take longest start first, so that none is left running alone at the end
 *   (a clean clone, as in CI, has no vitest results cache, and vitest would start the largest
 *   files by size first, leaving small but slow ones such as test/store/concurrency.test.ts,
 *   93 lines and ~50 s, for the tail);
 * - the CPU-heavy files — those that call `oneCpuHeavyFileAtATime()` (test/helpers/cpu-heavy.ts),
 *   which run one at a time — are spread evenly among the others, longest first, so that a worker
 *   seldom picks one while the other still runs one and waits for it.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files of a full run, longest first: seconds at one worker in the fresh-clone CI run
 * of 2026-11-26 (load ~1.5), and files that took 20-45 s in a one-worker run at load 10-17.
 */
export const SLOW_FIRST: readonly string[] = [
  'test/store/concurrency.test.ts', // 50 (CPU-heavy)
  'test/reliability/crash.test.ts', // 46 (CPU-heavy)
  'test/e2e/claude.test.ts', // 38.5 (CPU-heavy)
  'test/store/postgres.test.ts', // 29
  'test/web/first-hour.test.ts', // 28 (CPU-heavy)
  'test/reliability/load.test.ts', // 24 (CPU-heavy)
  'test/serve/multi-writer.test.ts', // 19.6 (CPU-heavy)
  'test/store/postgres-substrate.test.ts', // 18
  'test/web/browser.test.ts', // 12 (CPU-heavy)
  'test/bench/peers.test.ts', // 11.7
  'test/store/sqlite-ann.test.ts', // 11.3
  'test/store/postgres-copy.test.ts', // 45 at load 10-17
  'test/serve/serve.test.ts', // 41 at load 10-17
  'test/ledger/ledger.test.ts', // 39 at load 10-17
  'test/ingest/runner.test.ts', // 32 at load 10-17
];

const HEAVY_CALL = /^await oneCpuHeavyFileAtATime\(\)/m;

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const measured = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(relative(this.ctx.config.root, f.moduleId).split('\\').join('/'));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    const ordered = [...measured].sort((a, b) => rank(a) - rank(b));
    const heavy = ordered.filter((f) => HEAVY_CALL.test(readFileSync(f.moduleId, 'utf8')));
    const light = ordered.filter((f) => !heavy.includes(f));
    if (heavy.length === 0) return ordered;
    // One heavy file, then an even share of the others, and so on.
    const gap = Math.max(1, Math.floor(light.length / heavy.length));
    const out: TestSpecification[] = [];
    heavy.forEach((h, i) => out.push(h, ...light.slice(i * gap, (i + 1) * gap)));
    out.push(...light.slice(heavy.length * gap));
    return out;
  }
}
