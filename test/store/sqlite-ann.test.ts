import { existsSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { HnswVectorIndex, checkIndexFile } from '../../src/store/ann-index.js';
import { SqliteStore, openSqliteStore } from '../../src/store/sqlite/store.js';
import type { SqliteVectorIndexOptions } from '../../src/store/sqlite/vectors.js';
import type { EmbedderIdentity, Memory, MemoryEvent } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { makeMemory } from './conformance.js';
import { clusteredVectors } from './vectors-fixture.js';

const dir = tempDir('cairn-sqlite-ann-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const DIM = 32;
const MODEL: EmbedderIdentity = { model: 'test:clustered', dimension: DIM };
const THRESHOLD = 1_000;
const { vectors, queries } = clusteredVectors({ seed: 11, count: 2_400, dimension: DIM, clusters: 30, queries: 20 });

const created = (m: Memory): MemoryEvent => ({ memoryId: m.id, type: 'create', at: m.createdAt, actor: 'test', data: {} });
let files = 0;

async function open(path: string, options: SqliteVectorIndexOptions = {}): Promise<SqliteStore> {
  return openSqliteStore(path, { vectorIndex: { annThreshold: THRESHOLD, build: 'inline', ...options } });
}

/** A store at a new path holding `count` memories with the fixture's vectors; returns their ids in order. */
async function seeded(count: number, options: SqliteVectorIndexOptions = {}): Promise<{ store: SqliteStore; path: string; ids: string[] }> {
  const path = join(dir, `store-${files++}.db`);
  const store = new SqliteStore({ path, vectorIndex: { annThreshold: THRESHOLD, build: 'inline', ...options } });
  await store.open();
  const ids = await addMemories(store, 0, count);
  return { store, path, ids };
}

async function addMemories(store: SqliteStore, from: number, to: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < to; i++) {
    const memory = makeMemory({ text: `clustered memory ${i} ${Math.random()}` });
    await store.writeMemory({ memory, events: [created(memory)], embedding: { model: MODEL, vector: vectors[i] as Float32Array } });
    ids.push(memory.id);
  }
  return ids;
}

const sidecar = (path: string): { file: string; seq: number; count: number } => JSON.parse(readFileSync(`${path}.vectors.json`, 'utf8'));
const top = async (store: SqliteStore, vector: Float32Array, limit = 10): Promise<string[]> =>
  (await store.searchVector(vector, MODEL, { limit })).map((h) => h.id);

/**
 * The share of rows `from` … `to - 1` whose own vector finds them first. HNSW is approximate and
 * need not reach every row: built on all cores it left ~0.2% of this fixture's rows unreachable,
 * different ones from run to run (the index now builds on one thread, test/store/ann-index.test.ts),
 * so a check on one row could fail now and then; one on many rows does not, and still fails when
 * the rows are missing from the index.
 */
async function foundFirst(store: SqliteStore, ids: readonly string[], from: number, to: number): Promise<number> {
  let found = 0;
  for (let i = from; i < to; i++) if ((await top(store, vectors[i] as Float32Array, 1))[0] === ids[i]) found++;
  return found / (to - from);
}

/** The first row from `from` on that its own vector finds first (see {@link foundFirst}). */
async function reachable(store: SqliteStore, ids: readonly string[], from: number): Promise<number> {
  for (let i = from; i < ids.length; i++) if ((await top(store, vectors[i] as Float32Array, 1))[0] === ids[i]) return i;
  throw new Error(`no row from ${from} on finds itself`);
}

describe('SQLite store vector index: exact below the threshold, HNSW above', { timeout: 60_000 }, () => {
  it('switches to HNSW once the table crosses the threshold and saves it beside the database', async () => {
    const { store, path, ids } = await seeded(THRESHOLD - 100);
    expect(await top(store, vectors[5] as Float32Array, 1)).toEqual([ids[5]]);
    expect(store.capabilities.ann).toBe(false);
    expect(existsSync(`${path}.vectors.json`)).toBe(false);
    ids.push(...(await addMemories(store, THRESHOLD - 100, THRESHOLD + 200)));
    expect(await foundFirst(store, ids, THRESHOLD + 100, THRESHOLD + 200)).toBeGreaterThanOrEqual(0.95);
    expect(store.capabilities.ann).toBe(true);
    const saved = sidecar(path);
    expect(saved.count).toBe(THRESHOLD + 200);
    expect(existsSync(join(dir, saved.file))).toBe(true);
    await store.close();
  });

  it('saves rows still pending beside the graph folded in: another process finds them', async () => {
    const { store, path, ids } = await seeded(THRESHOLD + 100, { saveEvery: 100 });
    expect(await foundFirst(store, ids, 0, 50)).toBeGreaterThanOrEqual(0.95);
    expect(sidecar(path).seq).toBe(THRESHOLD + 100);
    // Fewer than FOLD_AT rows, enough for a save: they are in the exact delta when it is written.
    ids.push(...(await addMemories(store, THRESHOLD + 100, THRESHOLD + 250)));
    expect(await top(store, vectors[THRESHOLD + 200] as Float32Array, 1)).toEqual([ids[THRESHOLD + 200]]);
    expect(sidecar(path)).toMatchObject({ seq: THRESHOLD + 250, count: THRESHOLD + 250 });
    const other = await open(path);
    expect(await foundFirst(other, ids, THRESHOLD + 100, THRESHOLD + 250)).toBeGreaterThanOrEqual(0.95);
    await other.close();
    await store.close();
  });

  it('reopens the saved index (no rebuild) and agrees with exact search', async () => {
    const { store, path, ids } = await seeded(2_000);
    const first = await Promise.all(queries.map((q) => top(store, q)));
    await store.close();

    const view = vi.spyOn(HnswVectorIndex, 'view');
    const create = vi.spyOn(HnswVectorIndex, 'create');
    const reopened = await open(path);
    const again = await Promise.all(queries.map((q) => top(reopened, q)));
    expect(view).toHaveBeenCalledTimes(1);
    expect(create).not.toHaveBeenCalled();
    expect(again).toEqual(first);
    await reopened.close();

    const exact = await open(path, { annThreshold: Infinity });
    let agree = 0;
    for (const [i, q] of queries.entries()) {
      const truth = new Set(await top(exact, q));
      agree += (again[i] as string[]).filter((id) => truth.has(id)).length;
    }
    expect(agree / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
    expect(exact.capabilities.ann).toBe(false);
    await exact.close();

    const loaded = await open(path, { open: 'load' });
    expect(await foundFirst(loaded, ids, 1_200, 1_250)).toBeGreaterThanOrEqual(0.95);
    await loaded.close();
  });

  it('sees what another store instance on the same file wrote since it opened, and saves once enough arrived', async () => {
    const { store: a, path, ids } = await seeded(1_200, { saveEvery: 500 });
    await top(a, vectors[0] as Float32Array);
    const b = await open(path, { saveEvery: 500 });
    expect(await foundFirst(b, ids, 0, 50)).toBeGreaterThanOrEqual(0.95);
    const savedBefore = sidecar(path).seq;

    const more = await addMemories(a, 1_200, 1_300);
    expect(await top(b, vectors[1_250] as Float32Array, 1)).toEqual([more[50]]);
    expect(sidecar(path).seq).toBe(savedBefore); // 100 rows: not worth a save yet

    // b revises one of a's vectors; a sees the new one and no longer the old.
    await b.putVectors(MODEL, [{ id: ids[10] as string, vector: vectors[2_300] as Float32Array }]);
    expect(await top(a, vectors[2_300] as Float32Array, 1)).toEqual([ids[10]]);
    expect(await top(a, vectors[10] as Float32Array, 3)).not.toContain(ids[10]);

    await addMemories(a, 1_300, 1_900);
    await top(b, vectors[0] as Float32Array);
    const saved = sidecar(path);
    expect(saved.seq).toBeGreaterThan(savedBefore);
    expect(saved.count).toBe(1_900);
    // Only the current index file is kept.
    expect(readdirSync(dir).filter((name) => name.startsWith(`${path.split('/').pop()}.vectors.`) && name.endsWith('.usearch'))).toEqual([saved.file]);
    await a.close();
    await b.close();
  });

  it('rebuilds from the table when the saved file is truncated or overwritten', async () => {
    const { store, path, ids } = await seeded(1_500);
    await top(store, vectors[0] as Float32Array);
    await store.close();
    const file = join(dir, sidecar(path).file);
    truncateSync(file, 4_000);

    const create = vi.spyOn(HnswVectorIndex, 'create');
    const rebuilt = await open(path);
    expect(await foundFirst(rebuilt, ids, 700, 750)).toBeGreaterThanOrEqual(0.95);
    expect(create).toHaveBeenCalledTimes(1);
    await rebuilt.close();
    // The rebuilt copy replaced the broken one (same seq: a broken file does not win on seq).
    expect(sidecar(path).file).not.toBe(file.split('/').pop());
    expect(() => checkIndexFile(join(dir, sidecar(path).file), DIM)).not.toThrow();

    // Same size as recorded, but not an index any more.
    const current = join(dir, sidecar(path).file);
    writeFileSync(current, Buffer.alloc(readFileSync(current).length, 7));
    const again = await open(path);
    expect(await foundFirst(again, ids, 750, 800)).toBeGreaterThanOrEqual(0.95);
    expect(create).toHaveBeenCalledTimes(2);
    await again.close();
    expect(() => checkIndexFile(join(dir, sidecar(path).file), DIM)).not.toThrow();
    const reopened = await open(path);
    expect(await foundFirst(reopened, ids, 800, 850)).toBeGreaterThanOrEqual(0.95);
    expect(create).toHaveBeenCalledTimes(2);
    await reopened.close();
  });

  it('keeps forget, restore and supersede consistent, and still fills the limit', async () => {
    const { store, ids } = await seeded(1_200);
    const row = await reachable(store, ids, 100);
    const query = vectors[row] as Float32Array;
    const before = await top(store, query, 10);
    expect(before[0]).toBe(ids[row]);
    const forgotten = before.slice(0, 5);
    for (const id of forgotten) await store.patchMemory(id, { deletedAt: 5, updatedAt: 5 }, { memoryId: id, type: 'forget', at: 5, actor: 't', data: {} });
    const after = await top(store, query, 10);
    expect(after).toHaveLength(10);
    expect(after.some((id) => forgotten.includes(id))).toBe(false);
    await store.patchMemory(ids[row] as string, { deletedAt: null, updatedAt: 6 }, { memoryId: ids[row] as string, type: 'restore', at: 6, actor: 't', data: {} });
    expect((await top(store, query, 1))[0]).toBe(ids[row]);

    const next = makeMemory({ text: 'the revised finding' });
    await store.writeMemory({ memory: next, events: [created(next)], closes: { id: ids[row] as string, at: next.createdAt }, embedding: { model: MODEL, vector: query } });
    const superseded = await top(store, query, 10);
    expect(superseded[0]).toBe(next.id);
    expect(superseded).not.toContain(ids[row]);
    expect((await store.searchVector(query, MODEL, { limit: 10, includeSuperseded: true })).map((h) => h.id)).toContain(ids[row]);
    await store.close();
  });

  it('drops the saved index on clearVectors and starts exact again', async () => {
    const { store, path } = await seeded(1_100);
    await top(store, vectors[0] as Float32Array);
    expect(existsSync(`${path}.vectors.json`)).toBe(true);
    await store.clearVectors();
    expect(readdirSync(dir).some((name) => name.startsWith(`${path.split('/').pop()}.vectors.`))).toBe(false);
    expect(await top(store, vectors[0] as Float32Array)).toEqual([]);
    await store.close();
  });
});
