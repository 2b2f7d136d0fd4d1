/**
 * A background model switch (`cairn reindex --fill` with another embedder than the index's, what
 * a hook's detached ingest and `cairn remember` start) killed with SIGKILL mid-run: the old index
 * is untouched and still the one searched, the staged vectors stay, and the next filler takes the
 * dead lease over at once, embeds only the rest and swaps the index in one step — never mixed.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FILL_LEASE_KEY } from '../../src/embed/fill-lease.js';
import { fillVectors } from '../../src/embed/fill.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers/cli.js';
import { fillMemories, killAfterFirstVectors } from '../helpers/kill-embedding.js';

const BUILT = existsSync(join(process.cwd(), 'dist', 'embed', 'switch.js'));
if (!BUILT) console.warn('skipping the model switch kill -9 test: dist/ is not built with the switch (npm run build; npm test does)');

const dir = tempDir('cairn-switch-kill-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MEMORIES = 300;

describe.skipIf(!BUILT)('background model switch after kill -9', () => {
  it('keeps the old index searched and the staged vectors, and the next filler finishes and swaps', async () => {
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    await fillMemories(store, MEMORIES);
    const old = createHashEmbedder({ dimension: 32 });
    await reindex(store, old);
    const staged = async () => (await store.vectorStaging.staged())?.vectors ?? 0;
    const { pid, vectors: done } = await killAfterFirstVectors(store, dir, ['reindex', '--fill', '--batch', '1'], { CAIRN_EMBEDDER: 'hash:64' }, MEMORIES, staged);
    expect(JSON.parse((await store.getState(FILL_LEASE_KEY)) ?? 'null')).toMatchObject({ pid, by: 'cli fill', model: 'hash:v1:64' });
    // Killed mid-switch: the index is the old model's, whole, and searchable with it.
    expect(await store.vectorModel()).toEqual({ model: old.model, dimension: 32 });
    expect(store.db.prepare('SELECT DISTINCT length(vector) FROM vectors').pluck().all()).toEqual([32 * 4]);
    expect((await store.stats()).vectors).toBe(MEMORIES);
    const [query] = await old.embed(['finding 7: module m7 calls helper h7']);
    expect((await store.searchVector(query!, old, { limit: 5 })).length).toBe(5);
    expect(await store.vectorStaging.staged()).toEqual({ model: { model: 'hash:v1:64', dimension: 64 }, vectors: done });

    // No waiting for the lease to expire: its holder is gone. Only the rest is embedded.
    const next = createHashEmbedder({ dimension: 64 });
    const summary = await fillVectors(store, next);
    expect(summary).toMatchObject({ outcome: 'done', embedded: MEMORIES - done, remaining: 0, switching: { committed: true } });
    expect(await store.vectorModel()).toEqual({ model: next.model, dimension: 64 });
    expect(store.db.prepare('SELECT DISTINCT length(vector) FROM vectors').pluck().all()).toEqual([64 * 4]);
    expect((await store.stats()).vectors).toBe(MEMORIES);
    expect(await store.vectorStaging.staged()).toBeNull();
    expect(await store.getState(FILL_LEASE_KEY)).toBeNull();
    expect((await store.integrityCheck()) ?? []).toEqual([]);
    await store.close();
  }, 240_000);
});
