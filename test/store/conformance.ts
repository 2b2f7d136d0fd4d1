/**
 * The store conformance suite: every Store backend must pass it unchanged. Call
 * `storeConformance('name', factory)` from the backend's test file; the factory returns a fresh,
 * opened, empty store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embeddingCacheKey } from '../../src/embed/cache.js';
import { contentHash } from '../../src/memory/normalize.js';
import type { EmbedderIdentity, Memory, MemoryEvent, ReviewItem, Store } from '../../src/types.js';

let seq = 0;
export function makeMemory(overrides: Partial<Memory> = {}): Memory {
  seq++;
  const text = overrides.text ?? `memory number ${seq}`;
  const at = overrides.createdAt ?? 1_700_000_000_000 + seq * 1000;
  return {
    id: `M${String(seq).padStart(8, '0')}`,
    text,
    kind: 'fact',
    scope: 'project',
    project: 'proj-a',
    session: null,
    tags: [],
    importance: 0.5,
    source: 'manual',
    provenance: null,
    context: null,
    files: [],
    createdAt: at,
    updatedAt: at,
    validFrom: at,
    validTo: null,
    supersedes: null,
    accessCount: 0,
    lastAccessedAt: null,
    lastRecalledAt: null,
    pinned: false,
    deletedAt: null,
    meta: {},
    ...overrides,
    contentHash: overrides.contentHash ?? contentHash(text),
  };
}

const created = (m: Memory): MemoryEvent => ({ memoryId: m.id, type: 'create', at: m.createdAt, actor: 'test', data: {} });
const MODEL: EmbedderIdentity = { model: 'test:v1', dimension: 3 };
const unit = (...xs: number[]): Float32Array => {
  const n = Math.hypot(...xs);
  return new Float32Array(xs.map((x) => x / n));
};

export function storeConformance(name: string, factory: () => Promise<Store>): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await factory();
    });
    afterEach(async () => {
      await store.close();
    });

    it('writes and reads a memory with every field intact', async () => {
      const m = makeMemory({
        text: 'parse_config(path) lives in src/config.py:42',
        tags: ['config', 'python'],
        files: [{ path: 'src/config.py', line: 42, hash: 'abc', lineText: 'def parse_config(path):' }],
        provenance: { transcript: '/t.jsonl', line: 7 },
        meta: { k: 1 },
        pinned: true,
      });
      const result = await store.writeMemory({ memory: m, events: [created(m)] });
      expect(result.inserted).toBe(true);
      expect(await store.getMemory(m.id)).toEqual(m);
      expect(await store.getMemory('nope')).toBeNull();
    });

    it('keeps a memory\'s context and finds the memory by the words of its context (full text)', async () => {
      const m = makeMemory({ text: 'Five years already!', context: 'How long have you been married?', provenance: { sessionId: 'chat-1', line: 2 } });
      await store.writeMemory({ memory: m, events: [created(m)] });
      expect(await store.getMemory(m.id)).toEqual(m);
      expect((await store.searchText('married', { project: 'proj-a', limit: 5 })).map((h) => h.id)).toEqual([m.id]);
      // A patch of the tags keeps the context indexed.
      await store.patchMemory(m.id, { tags: ['family'], updatedAt: m.createdAt + 1 }, { memoryId: m.id, type: 'update', at: m.createdAt + 1, actor: 'test', data: {} });
      expect((await store.searchText('married', { project: 'proj-a', limit: 5 })).map((h) => h.id)).toEqual([m.id]);
      expect((await store.getMemory(m.id))?.context).toBe('How long have you been married?');
      const plain = makeMemory({ text: 'no context here' });
      await store.writeMemory({ memory: plain, events: [created(plain)] });
      expect((await store.getMemory(plain.id))?.context).toBeNull();
    });

    it('refuses an exact duplicate in the same project and returns the existing one', async () => {
      const a = makeMemory({ text: 'Use pnpm,  not npm' });
      await store.writeMemory({ memory: a, events: [created(a)] });
      const b = makeMemory({ text: 'use PNPM, not npm' });
      const second = await store.writeMemory({ memory: b, events: [created(b)] });
      expect(second.inserted).toBe(false);
      expect(second.memory.id).toBe(a.id);
      expect(await store.getMemory(b.id)).toBeNull();
      // Another project may hold the same text.
      const c = makeMemory({ text: 'use pnpm, not npm', project: 'proj-b' });
      expect((await store.writeMemory({ memory: c, events: [created(c)] })).inserted).toBe(true);
      expect((await store.findByContentHash(a.contentHash, 'proj-a'))?.id).toBe(a.id);
    });

    it('supersedes atomically: the old version is closed and kept, versions are chained', async () => {
      const v1 = makeMemory({ text: 'port is 8080' });
      await store.writeMemory({ memory: v1, events: [created(v1)] });
      const v2 = makeMemory({ text: 'port is 9090', supersedes: v1.id });
      await store.writeMemory({ memory: v2, events: [created(v2)], closes: { id: v1.id, at: v2.createdAt } });
      expect((await store.getMemory(v1.id))?.validTo).toBe(v2.createdAt);
      expect((await store.versions(v1.id)).map((m) => m.id)).toEqual([v1.id, v2.id]);
      expect((await store.versions(v2.id)).map((m) => m.id)).toEqual([v1.id, v2.id]);
      const active = await store.listMemories({ project: 'proj-a' });
      expect(active.map((m) => m.id)).toEqual([v2.id]);
      const v3 = makeMemory({ text: 'port is 7070', supersedes: v1.id });
      await expect(store.writeMemory({ memory: v3, events: [created(v3)], closes: { id: v1.id, at: 1 } })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await store.getMemory(v3.id)).toBeNull();
    });

    it('patches fields, keeps the full-text index in step, and logs the event', async () => {
      const m = makeMemory({ text: 'alpha beta' });
      await store.writeMemory({ memory: m, events: [created(m)] });
      const patched = await store.patchMemory(m.id, { tags: ['gamma'], importance: 0.9, updatedAt: m.createdAt + 5 }, { memoryId: m.id, type: 'update', at: m.createdAt + 5, actor: 'test', data: { x: 1 } });
      expect(patched.tags).toEqual(['gamma']);
      expect(patched.importance).toBe(0.9);
      expect((await store.searchText('gamma', { limit: 5 })).map((h) => h.id)).toEqual([m.id]);
      const events = await store.listEvents({ memoryId: m.id });
      expect(events.map((e) => e.type)).toEqual(['update', 'create']);
      expect(events[0]?.data).toEqual({ x: 1 });
      await expect(store.patchMemory('missing', { updatedAt: 1 }, created(m))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('soft-deletes: forgotten memories leave listings and search, and come back on restore', async () => {
      const m = makeMemory({ text: 'flaky test fixed by awaiting server.close()' });
      await store.writeMemory({ memory: m, events: [created(m)] });
      await store.patchMemory(m.id, { deletedAt: 5, updatedAt: 5 }, { memoryId: m.id, type: 'forget', at: 5, actor: 't', data: {} });
      expect(await store.searchText('flaky', { limit: 5 })).toEqual([]);
      expect((await store.listMemories({ onlyDeleted: true })).map((x) => x.id)).toEqual([m.id]);
      expect(await store.countMemories({})).toBe(0);
      await store.patchMemory(m.id, { deletedAt: null, updatedAt: 6 }, { memoryId: m.id, type: 'restore', at: 6, actor: 't', data: {} });
      expect((await store.searchText('flaky', { limit: 5 })).map((h) => h.id)).toEqual([m.id]);
    });

    it('finds code identifiers whole and by parts (snake, camel, path:line)', async () => {
      const a = makeMemory({ text: 'def process_workspace_changes(path: Path, db: Database, *, force: bool = False)' });
      const b = makeMemory({ text: 'the race is at /src/workspace/resolver.rs:214, call acquire_lock() first' });
      const c = makeMemory({ text: 'unrelated note about the weather' });
      for (const m of [a, b, c]) await store.writeMemory({ memory: m, events: [created(m)] });
      const top = async (q: string): Promise<string | undefined> => (await store.searchText(q, { limit: 3 }))[0]?.id;
      expect(await top('process_workspace_changes')).toBe(a.id);
      expect(await top('processWorkspaceChanges')).toBe(a.id);
      expect(await top('workspace changes')).toBe(a.id);
      expect(await top('resolver.rs:214')).toBe(b.id);
      expect(await top('acquireLock')).toBe(b.id);
      expect(await store.searchText('   ', { limit: 3 })).toEqual([]);
      // Query syntax characters are data, not FTS5 operators.
      expect(await store.searchText('"NEAR( AND OR * ^', { limit: 3 })).toBeInstanceOf(Array);
    });

    it('filters by project (with user scope), kind, scope, tags, session, pinned, dates', async () => {
      const p = makeMemory({ text: 'project fact one', tags: ['db', 'sql'], session: 's1' });
      const u = makeMemory({ text: 'user preference one', project: null, scope: 'user', kind: 'preference', tags: ['style'] });
      const o = makeMemory({ text: 'other project fact one', project: 'proj-b', pinned: true });
      for (const m of [p, u, o]) await store.writeMemory({ memory: m, events: [created(m)] });
      const ids = async (filter: Parameters<Store['listMemories']>[0]): Promise<string[]> => (await store.listMemories(filter)).map((m) => m.id).sort();
      expect(await ids({ project: 'proj-a' })).toEqual([p.id, u.id].sort());
      expect(await ids({ project: 'proj-a', includeUserScope: false })).toEqual([p.id]);
      expect(await ids({ project: null })).toEqual([u.id]);
      expect(await ids({ kinds: ['preference'] })).toEqual([u.id]);
      expect(await ids({ scopes: ['user'] })).toEqual([u.id]);
      expect(await ids({ tags: ['db', 'sql'] })).toEqual([p.id]);
      expect(await ids({ tags: ['db', 'style'] })).toEqual([]);
      expect(await ids({ anyTags: ['db', 'style'] })).toEqual([p.id, u.id].sort());
      expect(await ids({ session: 's1' })).toEqual([p.id]);
      expect(await ids({ pinned: true })).toEqual([o.id]);
      expect(await ids({ createdAfter: u.createdAt })).toEqual([u.id, o.id].sort());
      expect(await store.countMemories({ project: 'proj-b', includeUserScope: false })).toBe(1);
      expect((await store.searchText('fact one', { project: 'proj-b', includeUserScope: false, limit: 5 })).map((h) => h.id)).toEqual([o.id]);
      expect((await store.listMemories({ limit: 1, offset: 1, order: 'created-asc' })).map((m) => m.id)).toEqual([u.id]);
    });

    it('stores vectors under one model identity and searches them with filters', async () => {
      const a = makeMemory({ text: 'vector a' });
      const b = makeMemory({ text: 'vector b', project: 'proj-b' });
      const c = makeMemory({ text: 'vector c' });
      await store.writeMemory({ memory: a, events: [created(a)], embedding: { model: MODEL, vector: unit(1, 0, 0) } });
      await store.writeMemory({ memory: b, events: [created(b)], embedding: { model: MODEL, vector: unit(0.9, 0.1, 0) } });
      await store.writeMemory({ memory: c, events: [created(c)] });
      await store.putVectors(MODEL, [{ id: c.id, vector: unit(0, 1, 0) }]);
      expect(await store.vectorModel()).toEqual(MODEL);
      const all = await store.searchVector(unit(1, 0.05, 0), MODEL, { limit: 3 });
      expect(all.map((h) => h.id)).toEqual([a.id, b.id, c.id]);
      expect(all[0]?.score).toBeGreaterThan(0.99);
      const filtered = await store.searchVector(unit(1, 0.05, 0), MODEL, { project: 'proj-a', includeUserScope: false, limit: 3 });
      expect(filtered.map((h) => h.id)).toEqual([a.id, c.id]);
      expect((await store.getVectors([a.id, c.id], MODEL)).size).toBe(2);
      const other = { model: 'other:v1', dimension: 3 };
      await expect(store.searchVector(unit(1, 0, 0), other, { limit: 3 })).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      await expect(store.putVectors(other, [{ id: a.id, vector: unit(1, 0, 0) }])).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      await expect(store.putVectors(MODEL, [{ id: a.id, vector: new Float32Array(2) }])).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      expect((await store.missingVectors(MODEL, 10)).length).toBe(0);
      // forgotten memories drop out of vector search
      await store.patchMemory(a.id, { deletedAt: 9, updatedAt: 9 }, { memoryId: a.id, type: 'forget', at: 9, actor: 't', data: {} });
      expect((await store.searchVector(unit(1, 0, 0), MODEL, { limit: 3 })).map((h) => h.id)).not.toContain(a.id);
      await store.clearVectors();
      expect(await store.vectorModel()).toBeNull();
      expect(await store.searchVector(unit(1, 0, 0), MODEL, { limit: 3 })).toEqual([]);
      expect((await store.missingVectors(other, 10)).length).toBe(3);
    });

    it('keeps token signatures per model beside the vectors: written with them or alone, lost with a changed text, cleared with the index', async () => {
      if (!store.getSignatures || !store.putSignatures || !store.missingSignatures || !store.countMissingSignatures) {
        throw new Error(`${name} keeps no token signatures: recall would not be reranked on it`);
      }
      const a = makeMemory({ text: 'signed a' });
      const b = makeMemory({ text: 'signed b' });
      const c = makeMemory({ text: 'signed c' });
      const sig = (...bytes: number[]): Uint8Array => Uint8Array.from(bytes);
      await store.writeMemory({ memory: a, events: [created(a)], embedding: { model: MODEL, vector: unit(1, 0, 0), signature: sig(1, 2, 3) } });
      await store.writeMemory({ memory: b, events: [created(b)], embedding: { model: MODEL, vector: unit(0, 1, 0) } });
      await store.writeMemory({ memory: c, events: [created(c)] });
      await store.putVectors(MODEL, [{ id: c.id, vector: unit(0, 0, 1), signature: sig(7) }]);
      const read = async (ids: string[], model = MODEL): Promise<Record<string, number[]>> =>
        Object.fromEntries([...(await store.getSignatures!(ids, model))].map(([id, s]) => [id, [...s]]));
      expect(await read([a.id, b.id, c.id])).toEqual({ [a.id]: [1, 2, 3], [c.id]: [7] });
      expect(await read([a.id], { model: MODEL.model, dimension: 4 })).toEqual({});
      expect((await store.missingSignatures(MODEL, 10)).map((m) => m.id)).toEqual([b.id]);
      expect(await store.countMissingSignatures(MODEL)).toBe(1);
      // Another model than the index's is never signed.
      expect(await store.missingSignatures({ model: 'other:v1', dimension: 3 }, 10)).toEqual([]);
      expect(await store.countMissingSignatures({ model: 'other:v1', dimension: 3 })).toBe(0);
      await store.putSignatures(MODEL, [{ id: b.id, signature: sig(9, 9) }]);
      await store.putSignatures(MODEL, [{ id: a.id, signature: sig(4) }]);
      expect(await read([a.id, b.id])).toEqual({ [a.id]: [4], [b.id]: [9, 9] });
      expect(await store.countMissingSignatures(MODEL)).toBe(0);
      await expect(store.putSignatures(MODEL, [{ id: 'M-none', signature: sig(1) }])).rejects.toMatchObject({ code: 'NOT_FOUND' });
      // A text changed in place no longer matches its signature; other fields keep it.
      await store.patchMemory(b.id, { tags: ['t'], updatedAt: 5 }, { memoryId: b.id, type: 'update', at: 5, actor: 't', data: {} });
      expect(await read([b.id])).toEqual({ [b.id]: [9, 9] });
      await store.patchMemory(b.id, { text: 'signed b, revised', updatedAt: 6 }, { memoryId: b.id, type: 'update', at: 6, actor: 't', data: {} });
      expect(await read([b.id])).toEqual({});
      expect((await store.missingSignatures(MODEL, 10)).map((m) => m.id)).toEqual([b.id]);
      await store.clearVectors();
      expect(await read([a.id, c.id])).toEqual({});
    });

    it('clears vectors and claims the index for a new model in one step; the old model is refused', async () => {
      const a = makeMemory({ text: 'claimed a' });
      const b = makeMemory({ text: 'claimed b' });
      await store.writeMemory({ memory: a, events: [created(a)], embedding: { model: MODEL, vector: unit(1, 0, 0) } });
      const next: EmbedderIdentity = { model: 'next:v2', dimension: 4 };
      await store.clearVectors(next);
      expect(await store.vectorModel()).toEqual(next);
      // A process still on the old embedder cannot re-claim the emptied index nor mix models into it.
      await expect(store.putVectors(MODEL, [{ id: a.id, vector: unit(1, 0, 0) }])).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      await expect(store.writeMemory({ memory: b, events: [created(b)], embedding: { model: MODEL, vector: unit(0, 1, 0) } })).rejects.toMatchObject({
        code: 'EMBEDDER_MISMATCH',
      });
      expect(await store.getMemory(b.id)).toBeNull();
      await store.putVectors(next, [{ id: a.id, vector: unit(1, 0, 0, 0) }]);
      expect((await store.searchVector(unit(1, 0, 0, 0), next, { limit: 3 })).map((h) => h.id)).toEqual([a.id]);
      expect((await store.stats()).vectors).toBe(1);
    });

    it('stages another model beside the index and swaps it in at once when every memory has a staged vector', async () => {
      const staging = store.vectorStaging;
      if (!staging) return; // optional capability; every shipped backend has it
      const a = makeMemory({ text: 'staged a' });
      const b = makeMemory({ text: 'staged b' });
      await store.writeMemory({ memory: a, events: [created(a)], embedding: { model: MODEL, vector: unit(1, 0, 0) } });
      await store.writeMemory({ memory: b, events: [created(b)], embedding: { model: MODEL, vector: unit(0, 1, 0) } });
      const next: EmbedderIdentity = { model: 'next:v2', dimension: 4 };
      expect(await staging.staged()).toBeNull();
      await expect(staging.put(next, [{ id: a.id, vector: unit(1, 0, 0, 0) }])).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      await staging.begin(next);
      expect(await staging.staged()).toEqual({ model: next, vectors: 0 });
      await staging.put(next, [{ id: a.id, vector: unit(0, 0, 0, 1) }]);
      await expect(staging.put(next, [{ id: 'M-none', vector: unit(1, 0, 0, 0) }])).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(staging.put(next, [{ id: b.id, vector: unit(1, 0, 0) }])).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      await expect(staging.missing(MODEL, 10)).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      // Begin again with the same model: the staged vectors stay (a resumed switch).
      await staging.begin(next);
      expect((await staging.missing(next, 10)).map((m) => m.id)).toEqual([b.id]);
      // The index is untouched and still searched with the old model, never the staged one.
      expect(await store.vectorModel()).toEqual(MODEL);
      expect((await store.searchVector(unit(1, 0, 0), MODEL, { limit: 3 })).map((h) => h.id)).toEqual([a.id, b.id]);
      await expect(store.searchVector(unit(1, 0, 0, 0), next, { limit: 3 })).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      // Incomplete: nothing changes.
      expect(await staging.commit(next)).toBe(false);
      expect(await store.vectorModel()).toEqual(MODEL);
      await staging.put(next, [{ id: b.id, vector: unit(0, 0, 1, 0) }]);
      // A memory written meanwhile (with an old-model vector) keeps the switch from completing.
      const c = makeMemory({ text: 'staged c' });
      await store.writeMemory({ memory: c, events: [created(c)], embedding: { model: MODEL, vector: unit(0, 0, 1) } });
      expect(await staging.commit(next)).toBe(false);
      await staging.put(next, [{ id: c.id, vector: unit(0, 1, 0, 0) }]);
      expect(await staging.commit(next)).toBe(true);
      expect(await store.vectorModel()).toEqual(next);
      expect(await staging.staged()).toBeNull();
      expect((await store.stats()).vectors).toBe(3);
      expect((await store.searchVector(unit(0, 0, 0, 1), next, { limit: 1 })).map((h) => h.id)).toEqual([a.id]);
      expect((await store.getVectors([c.id], next)).get(c.id)).toEqual(unit(0, 1, 0, 0));
      await expect(store.searchVector(unit(1, 0, 0), MODEL, { limit: 3 })).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      await expect(store.putVectors(MODEL, [{ id: a.id, vector: unit(1, 0, 0) }])).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
      expect(await store.missingVectors(next, 10)).toEqual([]);
      // Another switch started and then given up, or cleared by a reindex from scratch.
      await staging.begin(MODEL);
      await staging.put(MODEL, [{ id: a.id, vector: unit(1, 0, 0) }]);
      await staging.begin({ model: 'third:v1', dimension: 2 });
      expect(await staging.staged()).toEqual({ model: { model: 'third:v1', dimension: 2 }, vectors: 0 });
      await staging.drop();
      expect(await staging.staged()).toBeNull();
      await staging.begin(MODEL);
      await store.clearVectors();
      expect(await staging.staged()).toBeNull();
    });

    it('updates one state key atomically: concurrent increments all count, null deletes, a throw changes nothing', async () => {
      const increment = (raw: string | null): string => String(Number(raw ?? '0') + 1);
      await Promise.all(Array.from({ length: 20 }, () => store.updateState('counter', increment)));
      expect(await store.getState('counter')).toBe('20');
      expect(await store.updateState('counter', increment)).toBe('21');
      await expect(
        store.updateState('counter', () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect(await store.getState('counter')).toBe('21');
      expect(await store.updateState('counter', () => null)).toBeNull();
      expect(await store.getState('counter')).toBeNull();
      expect(await store.updateState('fresh', (raw) => `${raw ?? 'none'}+1`)).toBe('none+1');
      expect(await store.getState('fresh')).toBe('none+1');
    });

    it('counts access and recall', async () => {
      const m = makeMemory();
      await store.writeMemory({ memory: m, events: [created(m)] });
      await store.touch([m.id], 100, false);
      await store.touch([m.id], 200, true);
      const got = await store.getMemory(m.id);
      expect(got).toMatchObject({ accessCount: 2, lastAccessedAt: 200, lastRecalledAt: 200 });
    });

    it('seals snapshots: later changes do not alter a snapshot’s members', async () => {
      const a = makeMemory({ text: 'snap a' });
      const b = makeMemory({ text: 'snap b' });
      for (const m of [a, b]) await store.writeMemory({ memory: m, events: [created(m)] });
      const snap = await store.createSnapshot({ id: 'S1', label: 'before', createdAt: 10, memoryCount: 0 }, { project: 'proj-a' });
      expect(snap.memoryCount).toBe(2);
      await store.patchMemory(a.id, { deletedAt: 11, updatedAt: 11 }, { memoryId: a.id, type: 'forget', at: 11, actor: 't', data: {} });
      const c = makeMemory({ text: 'snap c' });
      await store.writeMemory({ memory: c, events: [created(c)] });
      expect([...(await store.snapshotMemberIds('S1'))].sort()).toEqual([a.id, b.id].sort());
      expect((await store.listMemories({ snapshotId: 'S1' })).map((m) => m.id).sort()).toEqual([a.id, b.id].sort());
      expect((await store.searchText('snap', { snapshotId: 'S1', limit: 5 })).length).toBe(2);
      expect(await store.getSnapshot('before')).toMatchObject({ id: 'S1', memoryCount: 2 });
      expect(await store.getSnapshot('S1')).toMatchObject({ label: 'before' });
      await expect(store.createSnapshot({ id: 'S2', label: 'before', createdAt: 12, memoryCount: 0 }, {})).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await store.listSnapshots()).map((s) => s.label)).toEqual(['before']);
    });

    it('keeps state and reports stats', async () => {
      await store.setState('k', 'v1');
      await store.setState('k', 'v2');
      expect(await store.getState('k')).toBe('v2');
      expect(await store.getState('missing')).toBeNull();
      const m = makeMemory({ kind: 'decision' });
      await store.writeMemory({ memory: m, events: [created(m)] });
      const stats = await store.stats();
      expect(stats).toMatchObject({ memories: 1, active: 1, events: 1, byKind: { decision: 1 }, byScope: { project: 1 } });
      expect(stats.schemaVersion).toBeGreaterThan(0);
    });

    it('queues review items once per key, lists, counts and resolves them', async () => {
      const item = (id: string, key: string, project: string | null, kind: ReviewItem['kind'] = 'near-duplicate'): ReviewItem => ({
        id,
        key,
        kind,
        project,
        memoryIds: ['A', 'B'],
        reason: `why ${id}`,
        data: { similarity: 0.8 },
        createdAt: 100 + Number(id.slice(1)),
        resolvedAt: null,
        resolution: null,
      });
      expect(await store.queueReview([item('R1', 'dup:A:B', 'proj-a'), item('R2', 'con:A:C', 'proj-b', 'contradiction'), item('R3', 'stale:A', null, 'stale')])).toBe(3);
      expect(await store.queueReview([item('R4', 'dup:A:B', 'proj-a')])).toBe(0);
      expect(await store.getReview('R1')).toEqual(item('R1', 'dup:A:B', 'proj-a'));
      expect(await store.getReview('nope')).toBeNull();
      expect((await store.listReview({ open: true })).map((r) => r.id)).toEqual(['R1', 'R2', 'R3']);
      expect((await store.listReview({ project: 'proj-a' })).map((r) => r.id)).toEqual(['R1', 'R3']);
      expect((await store.listReview({ project: null })).map((r) => r.id)).toEqual(['R3']);
      expect((await store.listReview({ kinds: ['contradiction'] })).map((r) => r.id)).toEqual(['R2']);
      expect((await store.listReview({ limit: 1, offset: 1 })).map((r) => r.id)).toEqual(['R2']);
      const resolved = await store.resolveReview('R1', 'dismissed', 500);
      expect(resolved).toMatchObject({ id: 'R1', resolvedAt: 500, resolution: 'dismissed' });
      expect(await store.countReview({ open: true })).toBe(2);
      expect(await store.countReview({ open: false })).toBe(1);
      // A resolved finding is not queued again.
      expect(await store.queueReview([item('R5', 'dup:A:B', 'proj-a')])).toBe(0);
      expect(await store.resolveReview('R1', 'undone', 600)).toMatchObject({ resolution: 'undone', resolvedAt: 600 });
      await expect(store.resolveReview('nope', 'dismissed', 1)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('vacuums without losing data', async () => {
      const m = makeMemory({ text: 'survives vacuum' });
      await store.writeMemory({ memory: m, events: [created(m)] });
      const sizes = await store.vacuum();
      expect(sizes).toHaveProperty('beforeBytes');
      expect(sizes).toHaveProperty('afterBytes');
      expect((await store.getMemory(m.id))?.text).toBe('survives vacuum');
      expect((await store.searchText('vacuum', { limit: 5 })).map((h) => h.id)).toEqual([m.id]);
    });

    it('persists embeddings by (model, content hash) and returns copies of what was put', async () => {
      const cache = store.embeddingCache;
      expect(cache, 'the store offers a persistent embedding cache').toBeDefined();
      const keyA = embeddingCacheKey('model#with-hash:1', 'first text');
      const keyB = embeddingCacheKey('other-model', 'first text');
      await cache!.put([
        [keyA, Float32Array.from([0.5, -0.25, 1])],
        [keyB, Float32Array.from([1, 2])],
      ]);
      const found = await cache!.get([keyA, keyB, embeddingCacheKey('model#with-hash:1', 'never stored'), 'not-a-key']);
      expect([...found.keys()].sort()).toEqual([keyA, keyB].sort());
      expect(Array.from(found.get(keyA)!)).toEqual([0.5, -0.25, 1]);
      expect(Array.from(found.get(keyB)!)).toEqual([1, 2]);
      // Putting the same key again replaces the vector (a changed model of the same name).
      await cache!.put([[keyA, Float32Array.from([3, 3, 3])]]);
      expect(Array.from((await cache!.get([keyA])).get(keyA)!)).toEqual([3, 3, 3]);
      expect((await cache!.get([])).size).toBe(0);
    });
  });
}
