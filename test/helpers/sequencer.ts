/**
 * Test file order for `vitest run` with two or more workers (vitest.config.ts). A clean clone, as
 * in CI, has no vitest results cache, and vitest would start the largest files by size first,
 * leaving small but slow ones (test/store/concurrency.test.ts: 93 lines, ~50 s) for the tail; and
 * the CPU-heavy files — those that call `oneCpuHeavyFileAtATime()` (test/helpers/cpu-heavy.ts) —
 * run one at a time, so a worker that picks one while the other runs one waits.
 *
 * So the order is a simulated schedule on two workers from the estimates below: whenever a worker
 * is free it takes the longest CPU-heavy file if none is running, else the longest other file
 * (files without an estimate count 1 s and keep vitest's order). The heavy files then run back to
 * back while the other worker works through the rest.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds per file: at one worker in the fresh-clone CI run of 2026-11-26 (load ~1.5) for the
 * eleven slowest, else at two workers in a full run at load ~6. Only the order depends on them.
 */
export const ESTIMATED_SECONDS: Readonly<Record<string, number>> = {
  'test/store/concurrency.test.ts': 50,
  'test/reliability/crash.test.ts': 46,
  'test/e2e/claude.test.ts': 38.5,
  'test/store/postgres.test.ts': 29,
  'test/web/first-hour.test.ts': 28,
  'test/reliability/load.test.ts': 24,
  'test/serve/multi-writer.test.ts': 19.6,
  'test/store/postgres-substrate.test.ts': 18,
  'test/web/browser.test.ts': 12,
  'test/bench/peers.test.ts': 11.7,
  'test/store/sqlite-ann.test.ts': 11.3,
  'test/bench/ingest.test.ts': 16,
  'test/ingest/resume.test.ts': 12,
  'test/store/cjk-search.test.ts': 11,
  'test/store/model-vectors.test.ts': 10,
  'test/e2e/codex.test.ts': 10,
  'test/privacy/entry-points.test.ts': 9,
  'test/hooks/code-cache.test.ts': 9,
  'test/cli/errors.test.ts': 9,
  'test/store/ann-builder.test.ts': 9,
  'test/ingest/runner.test.ts': 8,
  'test/ingest/fuzz.test.ts': 8,
  'test/embed/onnx.test.ts': 8,
  'test/store/ann-index.test.ts': 7,
  'test/store/postgres-copy.test.ts': 7,
  'test/bench/cli.test.ts': 7,
};

const HEAVY_CALL = /^await oneCpuHeavyFileAtATime\(\)/m;

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const measured = await super.sort(files);
    const seconds = (f: TestSpecification) => ESTIMATED_SECONDS[relative(this.ctx.config.root, f.moduleId).split('\\').join('/')] ?? 1;
    const longestFirst = [...measured].sort((a, b) => seconds(b) - seconds(a));
    const heavy = longestFirst.filter((f) => HEAVY_CALL.test(readFileSync(f.moduleId, 'utf8')));
    const light = longestFirst.filter((f) => !heavy.includes(f));
    const workers = [0, 0];
    let heavyFreeAt = 0;
    const out: TestSpecification[] = [];
    while (heavy.length > 0 || light.length > 0) {
      const w = workers[0]! <= workers[1]! ? 0 : 1;
      const now = workers[w]!;
      if (heavy.length > 0 && (heavyFreeAt <= now || light.length === 0)) {
        const file = heavy.shift()!;
        heavyFreeAt = Math.max(now, heavyFreeAt) + seconds(file);
        workers[w] = heavyFreeAt;
        out.push(file);
      } else {
        const file = light.shift()!;
        workers[w] = now + seconds(file);
        out.push(file);
      }
    }
    return out;
  }
}
