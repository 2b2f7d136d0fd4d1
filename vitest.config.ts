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
  },
});
