/**
 * Full-text search in a worker thread (src/store/sqlite/text-search-offload.ts): the same hits,
 * scores and order as the store's in-thread search, for every filter, including rows written after
 * the worker started; without a worker script, or once the worker stopped, the store searches in
 * its own thread.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { TextSearchOffload } from '../../src/store/sqlite/text-search-offload.js';
import type { TextSearchOptions } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';

// Tests run from TypeScript sources, where there is no built worker script: bundle it once, inside
// the checkout (test-artifacts/ is ignored) so the bundle resolves better-sqlite3.
const bundleDir = join(process.cwd(), 'test-artifacts', `text-search-worker-${process.pid}`);
const dir = tempDir('cairn-text-worker-');
let workerUrl: URL;
beforeAll(async () => {
  const outfile = join(bundleDir, 'text-search-worker.mjs');
  await build({ entryPoints: [join(process.cwd(), 'src/store/sqlite/text-search-worker.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile, packages: 'external', logLevel: 'silent' });
  workerUrl = pathToFileURL(outfile);
});
afterAll(() => {
  rmSync(bundleDir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

async function seeded(name: string) {
  const path = join(dir, `${name}.db`);
  const store = await openSqliteStore(path);
  for (const project of ['alpha', 'beta']) {
    const cairn = createCairn({ store, project });
    for (let i = 0; i < 40; i++) {
      await cairn.remember({ text: `${project} note ${i}: parseConfig reads config_${i % 7}.yaml before startServer on port ${8000 + i}`, kind: i % 3 === 0 ? 'decision' : 'note', tags: [`t${i % 4}`] });
    }
  }
  await createCairn({ store, project: null }).remember({ text: 'user-wide: prefers parseConfig over readConfig', scope: 'user' });
  return { path, store };
}

const SEARCHES: Array<[string, TextSearchOptions]> = [
  ['parseConfig config_3', { limit: 50 }],
  ['parseConfig config_3', { limit: 10, project: 'alpha' }],
  ['startServer port 8012', { limit: 50, project: 'beta', kinds: ['decision'] }],
  ['config yaml', { limit: 5, anyTags: ['t1'] }],
  ['readConfig', { limit: 50, project: 'alpha' }],
  ['nothing matches this', { limit: 50 }],
];

describe('full-text search in a worker thread', () => {
  it('returns what the in-thread search returns, for every filter, and sees rows written after it started', async () => {
    const { path, store } = await seeded('same');
    const offload = new TextSearchOffload(path, workerUrl);
    try {
      for (const [query, options] of SEARCHES) {
        const inThread = await store.searchText(query, options);
        expect(await offload.search(query, options), `${query} ${JSON.stringify(options)}`).toEqual(inThread);
      }
      const searched = await offload.search('freshly written zebracorn', { limit: 10 });
      expect(searched).toEqual([]);
      await createCairn({ store, project: 'alpha' }).remember({ text: 'freshly written zebracorn memory' });
      const after = await offload.search('freshly written zebracorn', { limit: 10, project: 'alpha' });
      expect(after).toHaveLength(1);
      expect(after).toEqual(await store.searchText('freshly written zebracorn', { limit: 10, project: 'alpha' }));
    } finally {
      await offload.close();
      await store.close();
    }
  });

  it('answers concurrent searches each with its own hits', async () => {
    const { path, store } = await seeded('concurrent');
    const offload = new TextSearchOffload(path, workerUrl);
    try {
      const answers = await Promise.all(SEARCHES.map(([query, options]) => offload.search(query, options)));
      for (const [i, [query, options]] of SEARCHES.entries()) expect(answers[i]).toEqual(await store.searchText(query, options));
    } finally {
      await offload.close();
      await store.close();
    }
  });

  it('gives null (search in-thread) without a worker script and for searches in flight when it stops', async () => {
    const { path, store } = await seeded('fallback');
    try {
      const missing = new TextSearchOffload(path, pathToFileURL(join(dir, 'absent.mjs')));
      expect(missing.search('parseConfig', { limit: 5 })).toBeNull();
      const offload = new TextSearchOffload(path, workerUrl);
      const inFlight = offload.search('parseConfig', { limit: 5 });
      await offload.close();
      expect(await inFlight).toBeNull();
    } finally {
      await store.close();
    }
  });

  it("a store with textSearch 'worker' and no worker script beside it searches in its own thread", async () => {
    const { path, store } = await seeded('store');
    await store.close();
    // From the TypeScript sources there is no text-search-worker.js next to the store module.
    const offloading = await openSqliteStore(path, { textSearch: 'worker' });
    const plain = await openSqliteStore(path);
    try {
      for (const [query, options] of SEARCHES) expect(await offloading.searchText(query, options)).toEqual(await plain.searchText(query, options));
    } finally {
      await offloading.close();
      await plain.close();
    }
  });
});
