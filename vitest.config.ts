import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // BM25 unless a test names an embedder: cairn's default (all-MiniLM-L6-v2, when its files are
    // in the checkout) would make CLI processes the tests spawn depend on whether the model was
    // fetched, and start detached vector fills that outlive a test. Tests of the default pass
    // their own env (test/embed/default-embedder.test.ts).
    env: { CAIRN_EMBEDDER: 'none', CAIRN_BACKGROUND_FILL: '0', CAIRN_IDLE_FILL: '0' },
  },
});
