import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadUsearch } from '../../src/store/ann-index.js';
import { ProjectVectors } from '../../src/store/project-vectors.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { ExactVectorIndex } from '../../src/store/vector-index.js';
import type { EmbedderIdentity, Memory, MemoryEvent } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { makeMemory } from './conformance.js';
import { clusteredVectors } from './vectors-fixture.js';

const dir = tempDir('cairn-project-vectors-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const DIM = 48;
const MODEL: EmbedderIdentity = { model: 'test:clustered', dimension: DIM };
const { vectors, queries } = clusteredVectors({ seed: 23, count: 3_000, dimension: DIM, clusters: 40, queries: 30 });
/** Memory i's project: five projects and user-wide memories (null), a sixth each. */
const projectOf = (i: number): string | null => (i % 6 === 5 ? null : `p${i % 6}`);

const usearch = await loadUsearch();
const module = 'module' in usearch ? usearch.module : null;

describe.skipIf(!module)('ProjectVectors (int8 exact search per project)', () => {
  it('finds what float32 exact search finds among the chosen projects only', () => {
    const projects = new ProjectVectors(module!, DIM);
    const exact = new ExactVectorIndex(DIM);
    vectors.forEach((v, i) => {
      projects.upsert(i, projectOf(i), v);
      exact.upsert(i, v);
    });
    expect(projects.size).toBe(vectors.length);
    expect(projects.sizeOf(['p1', null])).toBe(1_000);
    let agree = 0;
    for (const q of queries) {
      const want = exact.search(q, 20, (key) => projectOf(key) === 'p1' || projectOf(key) === null);
      const got = projects.nearest(['p1', null], q, 20);
      expect(got).toHaveLength(20);
      expect(got.every((h) => projectOf(h.key) === 'p1' || projectOf(h.key) === null)).toBe(true);
      // Best first, scores within int8 rounding of the true cosines.
      for (let i = 1; i < got.length; i++) expect(got[i - 1]!.score).toBeGreaterThanOrEqual(got[i]!.score);
      const cosine = new Map(want.map((h) => [h.key, h.score]));
      for (const hit of got) if (cosine.has(hit.key)) expect(Math.abs(hit.score - cosine.get(hit.key)!)).toBeLessThan(0.01);
      const wanted = new Set(want.map((h) => h.key));
      agree += got.filter((h) => wanted.has(h.key)).length;
    }
    expect(agree / (queries.length * 20)).toBeGreaterThan(0.95);
  });

  it('replaces a key in place and never returns a project it was not asked for', () => {
    const projects = new ProjectVectors(module!, DIM);
    projects.upsert(1, 'a', vectors[0]!);
    projects.upsert(2, 'b', vectors[1]!);
    projects.upsert(1, 'a', vectors[2]!);
    expect(projects.size).toBe(2);
    expect(projects.nearest(['a'], vectors[2]!, 5).map((h) => h.key)).toEqual([1]);
    expect(projects.nearest(['a'], vectors[2]!, 5)[0]!.score).toBeGreaterThan(0.99);
    expect(projects.nearest(['c'], vectors[2]!, 5)).toEqual([]);
  });
});

describe.skipIf(!module)('SQLite store: project-filtered vector search on an HNSW index', { timeout: 60_000 }, () => {
  const created = (m: Memory): MemoryEvent => ({ memoryId: m.id, type: 'create', at: m.createdAt, actor: 'test', data: {} });

  async function seeded(path: string, count: number, projectSearch: 'exact' | 'hnsw'): Promise<{ store: SqliteStore; ids: string[] }> {
    const store = new SqliteStore({ path, vectorIndex: { annThreshold: 300, build: 'inline', projectSearch } });
    await store.open();
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const project = projectOf(i);
      const memory = makeMemory({ text: `memory ${i} of ${project ?? 'everyone'}`, project, scope: project === null ? 'user' : 'project' });
      await store.writeMemory({ memory, events: [created(memory)], embedding: { model: MODEL, vector: vectors[i]! } });
      ids.push(memory.id);
    }
    return { store, ids };
  }

  it('matches exact search under the filter, and keeps up with writes made after the copies were read', async () => {
    const { store, ids } = await seeded(join(dir, 'scoped.db'), 1_000, 'exact');
    const nearest = vi.spyOn(ProjectVectors.prototype, 'nearest');
    const project = new Map(ids.map((id, i) => [id, projectOf(i)]));
    const exact = new ExactVectorIndex(DIM);
    vectors.slice(0, 1_000).forEach((v, i) => exact.upsert(i, v));
    const search = (q: Float32Array, filter: { project: string | null; includeUserScope?: boolean }) => store.searchVector(q, MODEL, { ...filter, limit: 10 });
    // The first project-filtered search walks the HNSW graph; the copies are read from the second
    // on, a few ms of rows a search (the graph still searched meanwhile).
    await search(queries[0]!, { project: 'p0' });
    expect(nearest).not.toHaveBeenCalled();
    for (let i = 0; i < 1_000 && nearest.mock.calls.length === 0; i++) await search(queries[0]!, { project: 'p0' });
    expect(nearest).toHaveBeenCalledTimes(1);
    nearest.mockClear();
    let agree = 0;
    for (const q of queries) {
      const got = await search(q, { project: 'p2' });
      expect(got.every((h) => project.get(h.id) === 'p2' || project.get(h.id) === null)).toBe(true);
      const want = exact.search(q, 10, (key) => projectOf(key) === 'p2' || projectOf(key) === null).map((h) => ids[h.key]);
      agree += got.filter((h) => want.includes(h.id)).length;
      const own = await search(q, { project: 'p2', includeUserScope: false });
      expect(own.length).toBe(10);
      expect(own.every((h) => project.get(h.id) === 'p2')).toBe(true);
      const everyone = await search(q, { project: null });
      expect(everyone.every((h) => project.get(h.id) === null)).toBe(true);
    }
    expect(agree / (queries.length * 10)).toBeGreaterThan(0.95);
    expect(nearest).toHaveBeenCalledTimes(queries.length * 3);
    // Without a project filter the whole store's HNSW graph is searched.
    await store.searchVector(queries[0]!, MODEL, { limit: 10 });
    expect(nearest).toHaveBeenCalledTimes(queries.length * 3);

    // A memory written now (same vector as a query) is found by the next search of its project.
    const memory = makeMemory({ text: 'written after the copies were read', project: 'p2' });
    await store.writeMemory({ memory, events: [created(memory)], embedding: { model: MODEL, vector: queries[3]! } });
    expect((await search(queries[3]!, { project: 'p2' }))[0]?.id).toBe(memory.id);
    expect((await search(queries[3]!, { project: 'p1' })).map((h) => h.id)).not.toContain(memory.id);
    // A forgotten memory is still filtered out by the store.
    await store.patchMemory(memory.id, { updatedAt: Date.now(), deletedAt: Date.now() }, { memoryId: memory.id, type: 'forget', at: Date.now(), actor: 'test', data: {} });
    expect((await search(queries[3]!, { project: 'p2' })).map((h) => h.id)).not.toContain(memory.id);
    await store.close();
  });

  it("gives the same hits as `projectSearch: 'hnsw'` on most queries", async () => {
    const { store } = await seeded(join(dir, 'hnsw.db'), 600, 'hnsw');
    const { store: scoped } = await seeded(join(dir, 'exact.db'), 600, 'exact');
    // Different databases, different ids: compare texts.
    const texts = async (s: SqliteStore, q: Float32Array) => {
      const hits = await s.searchVector(q, MODEL, { project: 'p1', limit: 10 });
      return (await s.getMemories(hits.map((h) => h.id))).map((m) => m.text);
    };
    let agree = 0;
    for (const q of queries) {
      const want = await texts(store, q);
      const got = await texts(scoped, q);
      agree += got.filter((t) => want.includes(t)).length;
    }
    expect(agree / (queries.length * 10)).toBeGreaterThan(0.9);
    await store.close();
    await scoped.close();
  });
});
