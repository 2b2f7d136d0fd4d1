import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/helpers/sequencer.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run the sources: cairn's public API, its test-support entry and the benchmarks
    // workspace resolve to src/ and bench/src/ (one copy of every module, no build needed).
    alias: [
      { find: /^cairn-memory\/testing$/, replacement: here('./src/testing.ts') },
      { find: /^cairn-memory$/, replacement: here('./src/index.ts') },
      { find: /^cairn-bench$/, replacement: here('./bench/src/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Hang guards. 60 s since files run two at a time: on 2 busy cores a test then gets about half
    // the CPU it had alone, and at load 12 (other runs on the machine) tests that took ~15 s alone
    // ran past 30 s (test/cli/first-hour.test.ts's ingest, test/web/first-hour.test.ts at 1280 px).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two files at a time. vitest's default is one worker per core less one, which is a
    // single worker on a 2-core CI machine, where many files mostly wait: on the real Claude Code
    // and Codex clients, on CLI processes they spawn, on PostgreSQL. Files share no fixed state:
    // ports are 0, homes and stores are temp folders, and every PostgreSQL test store gets its own
    // schema named after its process (test/serve/pg.ts). `--maxWorkers=1` runs them one by one.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    minWorkers: 1,
    // The files known to be slow start first, so none is left alone at the end, and the CPU-heavy
    // ones, which take turns (test/helpers/cpu-heavy.ts), run back to back beside the others
    // (test/helpers/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    // BM25 unless a test names an embedder: cairn's default (all-MiniLM-L6-v2, when its files are
    // in the checkout) would make CLI processes the tests spawn depend on whether the model was
    // fetched, and start detached vector fills that outlive a test. Tests of the default pass
    // their own env (test/embed/default-embedder.test.ts).
    env: { CAIRN_EMBEDDER: 'none', CAIRN_BACKGROUND_FILL: '0', CAIRN_IDLE_FILL: '0' },
  },
});
