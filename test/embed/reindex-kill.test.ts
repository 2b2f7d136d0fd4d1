/**
 * `cairn reindex` killed with SIGKILL mid-run (a real process, kill -9): the store stays
 * consistent, the vectors written so far stay, and the next run embeds only the rest.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers/cli.js';
import { fillMemories, killAfterFirstVectors } from '../helpers/kill-embedding.js';

const BUILT = existsSync(join(process.cwd(), 'dist', 'cli', 'main.js'));
if (!BUILT) console.warn('skipping the reindex kill -9 test: dist/ is not built (npm run build; npm test does)');

const dir = tempDir('cairn-reindex-kill-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MEMORIES = 400;

describe.skipIf(!BUILT)('cairn reindex after kill -9', () => {
  it('keeps what was written and finishes the rest on the next run', async () => {
    const db = join(dir, 'cairn.db');
    const store = await openSqliteStore(db);
    await fillMemories(store, MEMORIES);
    const { vectors: after } = await killAfterFirstVectors(store, dir, ['reindex', '--embedder', 'hash:64', '--batch', '1'], { CAIRN_DEFAULT_EMBEDDER: 'none' }, MEMORIES);
    const summary = await reindex(store, createHashEmbedder({ dimension: 64 }));
    expect(summary).toMatchObject({ cleared: false, embedded: MEMORIES - after, vectors: MEMORIES, remaining: 0, complete: true });
    await store.close();
  }, 240_000);
});
