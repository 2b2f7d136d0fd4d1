/**
 * The background fill (`cairn reindex --fill`, what a hook's detached ingest and `cairn remember`
 * start) killed with SIGKILL mid-run: its lease is left behind, the next filler on this host takes
 * it over at once (the holder's pid is gone), keeps every vector written, and embeds only the rest.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FILL_LEASE_KEY } from '../../src/embed/fill-lease.js';
import { fillVectors } from '../../src/embed/fill.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { fillMemories, killAfterFirstVectors } from '../helpers/kill-embedding.js';

const BUILT = existsSync(join(process.cwd(), 'dist', 'embed', 'fill.js'));
if (!BUILT) console.warn('skipping the fill kill -9 test: dist/ is not built with the fill (npm run build; npm test does)');

const dir = tempDir('cairn-fill-kill-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MEMORIES = 400;

describe.skipIf(!BUILT)('background fill after kill -9', () => {
  it('leaves a dead lease that the next filler takes over at once, and finishes the rest', async () => {
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    await fillMemories(store, MEMORIES);
    const { pid, vectors: after } = await killAfterFirstVectors(store, dir, ['reindex', '--fill', '--batch', '1'], { CAIRN_EMBEDDER: 'hash:64' }, MEMORIES);
    expect(JSON.parse((await store.getState(FILL_LEASE_KEY)) ?? 'null')).toMatchObject({ pid, by: 'cli fill' });
    // No waiting for the lease to expire: its holder is gone.
    const summary = await fillVectors(store, createHashEmbedder({ dimension: 64 }));
    expect(summary).toMatchObject({ outcome: 'done', embedded: MEMORIES - after, remaining: 0 });
    expect((await store.stats()).vectors).toBe(MEMORIES);
    expect(await store.getState(FILL_LEASE_KEY)).toBeNull();
    await store.close();
  }, 240_000);
});

describe.skipIf(!BUILT)('cairn remember starts a detached fill', () => {
  it('the memory written without a vector gets one seconds later, from a process that then exits', async () => {
    const home = join(dir, 'remember');
    mkdirSync(home);
    const env = { CAIRN_EMBEDDER: 'hash:64', CAIRN_BACKGROUND_FILL: '' };
    const run = await runCli(['remember', 'use pnpm, never npm'], { home, env });
    expect(run.code).toBe(0);
    const store = await openSqliteStore(join(home, 'cairn.db'));
    expect((await store.stats()).memories).toBe(1);
    let vectors = 0;
    for (let waited = 0; waited < 30_000 && (await store.stats()).memories > vectors; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
      vectors = (await store.stats()).vectors;
    }
    expect(vectors).toBe((await store.stats()).memories);
    for (let waited = 0; waited < 10_000 && (await store.getState(FILL_LEASE_KEY)) !== null; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(await store.getState(FILL_LEASE_KEY)).toBeNull();
    await store.close();
  }, 60_000);
});
