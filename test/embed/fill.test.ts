/**
 * The background vector fill: one filler at a time (the lease), taken over at once after its
 * holder died, resumable when stopped, and never writing across another model's index.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { acquireFillLease, FILL_LEASE_KEY, readFillLease, type LeaseEnvironment } from '../../src/embed/fill-lease.js';
import { fillVectors } from '../../src/embed/fill.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function seeded(count = 50) {
  const dir = tempDir('cairn-fill-');
  dirs.push(dir);
  const store = await openSqliteStore(join(dir, 'cairn.db'));
  const plain = createCairn({ store, project: 'p' });
  for (let i = 0; i < count; i++) await plain.remember({ text: `finding ${i}: module m${i % 7} calls helper h${i % 5} with flag f${i}` });
  return store;
}

/** Another process of this host (or of another host), on a controllable clock. */
function env(over: Partial<LeaseEnvironment> = {}): LeaseEnvironment & { clock: { t: number } } {
  const clock = { t: 1_000_000 };
  return { now: () => clock.t, pid: 4242, host: 'here', isAlive: () => true, ttlMs: 60_000, clock, ...over };
}

describe('fill lease: one filler at a time', () => {
  it('a second filler finds the first one busy, and reindex refuses with CONFLICT naming it', async () => {
    const store = await seeded(10);
    const first = await acquireFillLease(store, 'hash:64', 'ingest', env({ pid: 1111 }));
    expect('lease' in first).toBe(true);
    const embedder = createHashEmbedder({ dimension: 64 });
    const second = await fillVectors(store, embedder, { lease: env({ pid: 2222 }) });
    expect(second).toMatchObject({ outcome: 'busy', embedded: 0, remaining: 10, holder: { pid: 1111, by: 'ingest' } });
    await expect(reindex(store, embedder, { lease: env({ pid: 3333 }) })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('pid 1111') });
    expect((await store.stats()).vectors).toBe(0);
    if ('lease' in first) await first.lease.release();
    expect(await fillVectors(store, embedder, { lease: env({ pid: 2222 }) })).toMatchObject({ outcome: 'done', embedded: 10, remaining: 0 });
    expect(await store.getState(FILL_LEASE_KEY)).toBeNull();
    await store.close();
  });

  it('a holder that died on this host (kill -9) is taken over at once; one on another host after the TTL', async () => {
    const store = await seeded(5);
    const embedder = createHashEmbedder({ dimension: 64 });
    // Left behind by a killed process: never released.
    await acquireFillLease(store, 'hash:64', 'ingest', env({ pid: 1111 }));
    const alive = new Set([2222]);
    const here = env({ pid: 2222, isAlive: (pid) => alive.has(pid) });
    expect(await readFillLease(store, here)).toBeNull();
    expect(await fillVectors(store, embedder, { lease: here })).toMatchObject({ outcome: 'done', embedded: 5 });

    const store2 = await seeded(5);
    const elsewhere = env({ pid: 1111, host: 'other-host' });
    await acquireFillLease(store2, 'hash:64', 'mcp', elsewhere);
    const local = env({ pid: 2222, isAlive: () => false });
    local.clock.t = elsewhere.clock.t + 59_000;
    expect(await fillVectors(store2, embedder, { lease: local })).toMatchObject({ outcome: 'busy', holder: { host: 'other-host' } });
    local.clock.t = elsewhere.clock.t + 61_000;
    expect(await fillVectors(store2, embedder, { lease: local })).toMatchObject({ outcome: 'done', embedded: 5 });
    await store.close();
    await store2.close();
  });

  it('a filler that lost its lease after a stall stops at its next batch', async () => {
    const store = await seeded(40);
    const slow = createHashEmbedder({ dimension: 64 });
    const mine = env({ pid: 1111 });
    let batches = 0;
    const stealing: Embedder = {
      model: slow.model,
      dimension: slow.dimension,
      async embed(texts) {
        batches++;
        // During the first batch the filler stalls past the TTL and another one takes over.
        if (batches === 1) {
          mine.clock.t += 120_000;
          const other = env({ pid: 2222, host: 'other-host' });
          other.clock.t = mine.clock.t;
          expect('lease' in (await acquireFillLease(store, slow.model, 'other', other))).toBe(true);
        }
        return slow.embed(texts);
      },
    };
    const summary = await fillVectors(store, stealing, { batchSize: 10, lease: mine });
    expect(summary).toMatchObject({ outcome: 'stopped', embedded: 10, remaining: 30 });
    expect(JSON.parse((await store.getState(FILL_LEASE_KEY)) ?? '{}')).toMatchObject({ pid: 2222 });
    await store.close();
  });
});

describe('fill: bounded, resumable, never mixing models', () => {
  it('stops at its budget or signal and the next run continues without re-embedding anything', async () => {
    const store = await seeded(60);
    const base = createHashEmbedder({ dimension: 64 });
    const seen: string[] = [];
    const counting: Embedder = { model: base.model, dimension: base.dimension, embed: async (texts) => (seen.push(...texts), base.embed(texts)) };
    const controller = new AbortController();
    const first = await fillVectors(store, counting, { batchSize: 8, onProgress: (done) => done >= 16 && controller.abort(), signal: controller.signal });
    expect(first).toMatchObject({ outcome: 'stopped', embedded: 16, remaining: 44 });
    const second = await fillVectors(store, counting, { batchSize: 8, maxMs: 0 });
    expect(second).toMatchObject({ outcome: 'stopped', embedded: 0, remaining: 44 });
    const third = await fillVectors(store, counting, { batchSize: 8 });
    expect(third).toMatchObject({ outcome: 'done', embedded: 44, remaining: 0 });
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    expect((await store.stats()).vectors).toBe(60);
    await store.close();
  });

  it('switches models in the background: builds the new vectors beside the old index, which recall keeps searching, and swaps them in at once', async () => {
    const store = await seeded(40);
    const old = createHashEmbedder({ dimension: 32 });
    const next = createHashEmbedder({ dimension: 64 });
    await reindex(store, old);
    const cairn = createCairn({ store, project: 'p' });
    await cairn.remember({ text: 'a memory written later, without a vector' });
    // Configured: the new model; the old one can be rebuilt from the index's id.
    const configured = createCairn({ store, embedder: next, project: 'p', indexEmbedder: async (index) => (index.model === old.model ? old : null) });
    const bm25Only = createCairn({ store, embedder: next, project: 'p' });

    const first = await fillVectors(store, next, { batchSize: 8, maxMs: 0 });
    expect(first).toMatchObject({ outcome: 'stopped', embedded: 0, remaining: 41, switching: { from: { model: old.model, dimension: 32 }, committed: false } });
    const controller = new AbortController();
    const second = await fillVectors(store, next, { batchSize: 8, signal: controller.signal, onProgress: (done) => done >= 16 && controller.abort() });
    expect(second).toMatchObject({ outcome: 'stopped', embedded: 16, remaining: 25, switching: { committed: false } });
    // Mid-switch: the index still holds only the old model; recall searches it with the old model, or runs on BM25.
    expect(await store.vectorModel()).toEqual({ model: old.model, dimension: 32 });
    expect(await store.vectorStaging?.staged()).toEqual({ model: { model: next.model, dimension: 64 }, vectors: 16 });
    expect((await configured.recall({ query: 'module m3 helper', touch: false })).mode).toBe('hybrid');
    expect((await bm25Only.recall({ query: 'module m3 helper', touch: false })).mode).toBe('bm25');
    const sizes = () => store.db.prepare('SELECT DISTINCT length(vector) FROM vectors').pluck().all();
    expect(sizes()).toEqual([32 * 4]);
    // A process still configured with the old model (an MCP server started before the change)
    // fills the old index as before and leaves the switch alone.
    expect(await fillVectors(store, old)).toMatchObject({ outcome: 'done', embedded: 1 });
    expect(await store.vectorStaging?.staged()).toEqual({ model: { model: next.model, dimension: 64 }, vectors: 16 });
    const third = await fillVectors(store, next, { batchSize: 8 });
    expect(third).toMatchObject({ outcome: 'done', embedded: 25, remaining: 0, switching: { from: { model: old.model }, committed: true } });
    expect(await store.vectorModel()).toEqual({ model: next.model, dimension: 64 });
    expect(sizes()).toEqual([64 * 4]);
    expect((await store.stats()).vectors).toBe(41);
    expect(await store.vectorStaging?.staged()).toBeNull();
    const after = await configured.recall({ query: 'module m3 helper', touch: false });
    expect(after.mode).toBe('hybrid');
    expect(await fillVectors(store, next)).toMatchObject({ outcome: 'done', embedded: 0, remaining: 0 });
    await store.close();
  });

  it('reports unavailable, without writing, when the model files are bad', async () => {
    const store = await seeded(3);
    const broken: Embedder = {
      model: 'onnx:broken',
      dimension: 8,
      embed: async () => {
        const { CairnError } = await import('../../src/errors.js');
        throw new CairnError('EMBEDDER_UNAVAILABLE', 'model file /x/model.onnx is missing; run fetch');
      },
    };
    expect(await fillVectors(store, broken)).toMatchObject({ outcome: 'unavailable', embedded: 0, remaining: 3, reason: expect.stringContaining('model.onnx') });
    expect(await store.getState(FILL_LEASE_KEY)).toBeNull();
    expect(await store.vectorModel()).toBeNull();
    await store.close();
  });
});
