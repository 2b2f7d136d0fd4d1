import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { findSimilar } from '../../src/memory/similar.js';
import { BANDS, BANDS_STATE_KEY, BANDS_VERSION, bandKeys } from '../../src/store/sqlite/memory-bands.js';
import { FOLD_AT } from '../../src/store/sqlite/pending-bands.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/types.js';

const NOW = Date.UTC(2026, 0, 1);

/** Every memory's band keys computed from its stored text, as "key:rowid" sorted. */
function expectedBands(store: SqliteStore): string[] {
  const rows = store.db.prepare('SELECT rowid, text, project FROM memories').all() as Array<{ rowid: number; text: string; project: string | null }>;
  return rows.flatMap((row) => [...new Set(bandKeys(row.text, row.project))].map((key) => `${key}:${row.rowid}`)).sort();
}

/**
 * The bands a lookup counts, as "key:rowid" sorted: a memory's newest pending row (memory_bands_pending)
 * stands for its bands, memory_bands' rows for the others.
 */
function storedBands(store: SqliteStore): string[] {
  const pending = new Map<number, Buffer>();
  for (const r of store.db.prepare('SELECT memory_rowid, hashes FROM memory_bands_pending ORDER BY seq').all() as Array<{ memory_rowid: number; hashes: Buffer }>) pending.set(r.memory_rowid, r.hashes);
  const out: string[] = [];
  for (const r of store.db.prepare('SELECT key, memory_rowid FROM memory_bands').all() as Array<{ key: number; memory_rowid: number }>) {
    if (!pending.has(r.memory_rowid)) out.push(`${r.key}:${r.memory_rowid}`);
  }
  for (const [rowid, hashes] of pending) for (let band = 0; band < hashes.length / 4; band++) out.push(`${band * 2 ** 32 + hashes.readUInt32LE(band * 4)}:${rowid}`);
  return out.sort();
}

function pendingRows(store: SqliteStore): number {
  return store.db.prepare('SELECT count(*) FROM memory_bands_pending').pluck().get() as number;
}

function bandsState(store: SqliteStore): { v: string; next?: number; done?: boolean } | null {
  const row = store.db.prepare('SELECT value FROM state WHERE key = ?').get(BANDS_STATE_KEY) as { value: string } | undefined;
  return row ? JSON.parse(row.value) : null;
}

/** The same store with full-text search refused: proves a check used the bands. */
function withoutTextSearch(store: SqliteStore): Store {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'searchText') return () => Promise.reject(new Error('searchText called'));
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as Store;
}

const TEXTS = [
  'resolveManifest in src/package/pluginTrace.ts:462 is slow on large batches of plugins',
  'the worker pool restarts after 3 failures of the health probe',
  'run migrations before the seed script, never after it',
  'User prefers bun to npm for scripts in this repository',
];

describe('near-duplicate bands (memory_bands)', () => {
  let root: string;
  let path: string;
  let store: SqliteStore;
  let cairn: Cairn;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-bands-'));
    path = join(root, 'cairn.db');
    store = await openSqliteStore(path);
    cairn = createCairn({ store, embedder: null, clock: { now: () => NOW }, project: 'p' });
  });

  afterEach(async () => {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a new store is complete; every write, text patch, forget and restore keeps the bands equal to the texts', async () => {
    expect(bandsState(store)).toEqual({ v: BANDS_VERSION, done: true });
    const written = [];
    for (const text of TEXTS) written.push((await cairn.remember({ text })).memory);
    await cairn.remember({ text: 'a user-scope note about the release checklist', scope: 'user' });
    expect(storedBands(store)).toHaveLength((TEXTS.length + 1) * BANDS);
    expect(storedBands(store)).toEqual(expectedBands(store));
    const first = written[0]!;
    await store.patchMemory(first.id, { text: 'resolveManifest is fast now: it caches plugin traces', updatedAt: NOW + 1 }, { memoryId: first.id, type: 'update', at: NOW + 1, actor: 'test', data: {} });
    await cairn.forget([written[1]!.id]);
    await cairn.restore(written[1]!.id);
    await cairn.revise(written[2]!.id, 'run migrations before the seed script, and again after a rollback');
    // Import writes in batches (Store.writeMemories).
    await cairn.importJsonl([JSON.stringify({ text: 'imported: the cache is flushed on SIGTERM' }), JSON.stringify({ text: 'imported: retries back off exponentially' })]);
    expect(storedBands(store)).toEqual(expectedBands(store));
  });

  it('finds a near-duplicate through the bands, in its project and the user scope, not in another project or once forgotten', async () => {
    const same = await cairn.remember({ text: 'resolveManifest in src/package/pluginTrace.ts:462 is slow on large batches' });
    const user = await cairn.remember({ text: 'resolveManifest in src/package/pluginTrace.ts:462 is slow on huge batches', scope: 'user' });
    await cairn.remember({ text: 'resolveManifest in src/package/pluginTrace.ts:462 is slow on large batches of plugins', project: 'q' });
    const gone = await cairn.remember({ text: 'resolveManifest in src/package/pluginTrace.ts:462 is slow on big batches' });
    await cairn.forget([gone.memory.id]);
    const probe = 'resolveManifest in src/package/pluginTrace.ts:462 is slow on large rate batches';
    const found = await findSimilar({ ...cairn.deps, store: withoutTextSearch(store) }, probe, null, 'p');
    expect(found.map((m) => m.id).sort()).toEqual([same.memory.id, user.memory.id].sort());
    // The user scope alone sees only user-scope memories.
    const fromUser = await findSimilar({ ...cairn.deps, store: withoutTextSearch(store) }, probe, null, null);
    expect(fromUser.map((m) => m.id)).toEqual([user.memory.id]);
    // Excluding a memory (the review queue asks about a stored one) leaves it out.
    const excluded = await findSimilar({ ...cairn.deps, store: withoutTextSearch(store) }, same.memory.text, null, 'p', same.memory.id);
    expect(excluded.map((m) => m.id)).not.toContain(same.memory.id);
  });

  it('returns the first `limit` candidates whose memories are active, reading past the first window of rows when it must', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await cairn.remember({ text: `the retry budget of worker ${i} is ${i * 7} ms under load ${'x'.repeat(i % 5)}` })).memory.id);
    const probe = 'the retry budget of worker 3 is 21 ms under load';
    const all = (await store.nearDuplicateCandidates(probe, 'p', 100))!.map((m) => m.id);
    expect(all.length).toBeGreaterThan(20);
    const top = (await store.nearDuplicateCandidates(probe, 'p', 8))!.map((m) => m.id);
    expect(top).toEqual(all.slice(0, 8));
    // Three of the first window's nine (8 + 1/8) are no longer active: the rest comes from the next window.
    await cairn.forget([top[0]!, top[2]!]);
    await cairn.revise(top[4]!, 'the retry budget is configured elsewhere now');
    const gone = new Set([top[0], top[2], top[4]]);
    const after = (await store.nearDuplicateCandidates(probe, 'p', 8))!.map((m) => m.id);
    expect(after).toEqual(all.filter((id) => !gone.has(id)).slice(0, 8));
  });

  it('reports what the full-text probe reports on a small store (same ids, same similarity)', async () => {
    for (const text of TEXTS) await cairn.remember({ text });
    for (const text of TEXTS.slice(0, 2)) await cairn.remember({ text: `${text} today` });
    const viaText = new Proxy(store, { get: (target, key) => (key === 'nearDuplicateCandidates' ? undefined : Reflect.get(target, key, target)) }) as Store;
    for (const text of TEXTS) {
      const probe = `${text} again`;
      const banded = await findSimilar({ ...cairn.deps, store: withoutTextSearch(store) }, probe, null, 'p');
      expect(banded.length).toBeGreaterThan(0);
      expect(banded).toEqual(await findSimilar({ ...cairn.deps, store: viaText }, probe, null, 'p'));
    }
  });

  it('with a vector model, the candidates carry their stored vectors (the same as getVectors), and the check decides as with getVectors', async () => {
    const embedder = createHashEmbedder();
    const embedded = createCairn({ store, embedder, clock: { now: () => NOW }, project: 'p' });
    for (const text of TEXTS) await embedded.remember({ text });
    for (const text of TEXTS.slice(0, 3)) await embedded.remember({ text: `${text} today` });
    // One memory without a vector (written with no embedder): a candidate without one.
    const bare = await cairn.remember({ text: `${TEXTS[3]!} and yarn` });
    const probe = `${TEXTS[0]!} again`;
    const candidates = (await store.nearDuplicateCandidates(probe, 'p', 64, embedder))!;
    expect(candidates.length).toBeGreaterThan(1);
    const stored = await store.getVectors(candidates.map((m) => m.id), embedder);
    for (const memory of candidates) expect(memory.vector).toEqual(stored.get(memory.id));
    const barely = (await store.nearDuplicateCandidates(TEXTS[3]!, 'p', 64, embedder))!;
    expect(barely.find((m) => m.id === bare.memory.id)).toMatchObject({ id: bare.memory.id });
    expect(barely.find((m) => m.id === bare.memory.id)?.vector).toBeUndefined();
    // No model, or another model than the stored one: no vectors read.
    expect((await store.nearDuplicateCandidates(probe, 'p', 64))!.every((m) => m.vector === undefined)).toBe(true);
    expect((await store.nearDuplicateCandidates(probe, 'p', 64, { model: 'other:v1', dimension: 64 }))!.every((m) => m.vector === undefined)).toBe(true);
    // The same decisions as a store whose candidates carry no vectors (each read by getVectors).
    const withoutVectors = new Proxy(store, {
      get: (target, key) =>
        key === 'nearDuplicateCandidates'
          ? (text: string, project: string | null, limit: number) => target.nearDuplicateCandidates(text, project, limit)
          : Reflect.get(target, key, target),
    }) as Store;
    // getMemoryTexts (the vector search's hits) gives the stored terms too; without any stored terms the check tokenizes, with the same result.
    const texts = await store.getMemoryTexts(candidates.map((m) => m.id));
    expect(texts.map((m) => m.terms)).toEqual(candidates.map((m) => m.terms));
    expect(texts.every((m) => (m.terms?.length ?? 0) > 0)).toBe(true);
    const strip = <T extends { terms?: unknown }>(list: T[] | null): T[] | null => list && list.map(({ terms: _terms, ...rest }) => rest as T);
    const withoutTerms = new Proxy(store, {
      get: (target, key) =>
        key === 'nearDuplicateCandidates'
          ? async (...args: Parameters<SqliteStore['nearDuplicateCandidates']>) => strip(await target.nearDuplicateCandidates(...args))
          : key === 'getMemoryTexts'
            ? async (ids: string[]) => strip(await target.getMemoryTexts(ids))
            : Reflect.get(target, key, target),
    }) as Store;
    let reported = 0;
    for (const text of [...TEXTS, probe]) {
      const [vector] = await embedder.embed([text]);
      const banded = await findSimilar({ ...embedded.deps, store: withoutTextSearch(store) }, text, vector!, 'p');
      reported += banded.length;
      expect(banded).toEqual(await findSimilar({ ...embedded.deps, store: withoutVectors }, text, vector!, 'p'));
      expect(banded).toEqual(await findSimilar({ ...embedded.deps, store: withoutTerms }, text, vector!, 'p'));
    }
    expect(reported).toBeGreaterThan(TEXTS.length);
  });

  it('a store written before the bands existed: full-text search until filled, chunk by chunk with a resumable cursor', async () => {
    for (let i = 0; i < 40; i++) await cairn.remember({ text: `memory ${i}: the retry budget of worker ${i % 7} is ${i * 7} ms` });
    // As migration 012 leaves an older store: an empty table and no state.
    store.db.prepare('DELETE FROM memory_bands').run();
    store.db.prepare('DELETE FROM state WHERE key = ?').run(BANDS_STATE_KEY);
    await store.close();
    store = await openSqliteStore(path);
    cairn = createCairn({ store, embedder: null, clock: { now: () => NOW }, project: 'p' });
    expect(await store.nearDuplicateCandidates('memory 3: the retry budget of worker 3 is 21 ms', 'p', 10)).toBeNull();
    // The check falls back to full-text search and still finds the near-duplicate.
    const before = await findSimilar(cairn.deps, 'memory 3: the retry budget of worker 3 is 21 ms today', null, 'p');
    expect(before.map((m) => m.text)).toContain('memory 3: the retry budget of worker 3 is 21 ms');

    const first = await store.fillNearDuplicateIndex({ chunk: 16, maxChunks: 1 });
    expect(first).toEqual({ filled: 16, complete: false });
    const rowid16 = (store.db.prepare('SELECT rowid FROM memories ORDER BY rowid LIMIT 1 OFFSET 15').pluck().get() as number);
    expect(bandsState(store)).toEqual({ v: BANDS_VERSION, next: rowid16 });
    // A write meanwhile adds its own bands; the rest is filled by the next calls.
    await cairn.remember({ text: 'written during the fill: flush the cache on SIGTERM' });
    const rest = await store.fillNearDuplicateIndex({ chunk: 16 });
    expect(rest.complete).toBe(true);
    expect(bandsState(store)).toEqual({ v: BANDS_VERSION, done: true });
    expect(storedBands(store)).toEqual(expectedBands(store));
    const after = await findSimilar({ ...cairn.deps, store: withoutTextSearch(store) }, 'memory 3: the retry budget of worker 3 is 21 ms today', null, 'p');
    expect(after).toEqual(before);
  });

  it('remember fills an unfilled store a chunk at a time; stats warn until it is complete', async () => {
    expect((await store.stats()).warnings ?? []).toEqual([]);
    for (let i = 0; i < 100; i++) await cairn.remember({ text: `note ${i}: service ${i % 13} listens on port ${8000 + i}` });
    store.db.prepare('DELETE FROM memory_bands').run();
    store.db.prepare('DELETE FROM state WHERE key = ?').run(BANDS_STATE_KEY);
    await store.close();
    store = await openSqliteStore(path);
    cairn = createCairn({ store, embedder: null, clock: { now: () => NOW }, project: 'p' });
    expect((await store.stats()).warnings?.join('\n')).toMatch(/near-duplicate bands .* not filled yet.*cairn migrate/);
    await cairn.remember({ text: 'one more note: service 99 listens on port 9999' });
    expect(bandsState(store)?.done).toBeUndefined();
    for (let i = 0; i < 3; i++) await cairn.remember({ text: `another note ${i}: the queue drains in ${i} s` });
    expect(bandsState(store)).toEqual({ v: BANDS_VERSION, done: true });
    expect((await store.stats()).warnings ?? []).toEqual([]);
    expect(storedBands(store)).toEqual(expectedBands(store));
  });

  it('bands of another scheme are dropped and rebuilt; a read-only store fills nothing', async () => {
    for (const text of TEXTS) await cairn.remember({ text });
    store.db.prepare('INSERT INTO memory_bands (key, memory_rowid) VALUES (?, ?)').run(123456789, 1);
    store.db.prepare('UPDATE state SET value = ? WHERE key = ?').run(JSON.stringify({ v: 'minhash-older', done: true }), BANDS_STATE_KEY);
    await store.close();
    const readonly = await openSqliteStore(path, { readonly: true });
    expect(await readonly.nearDuplicateCandidates(TEXTS[0]!, 'p', 10)).toBeNull();
    expect(await readonly.fillNearDuplicateIndex()).toEqual({ filled: 0, complete: false });
    await readonly.close();
    store = await openSqliteStore(path);
    expect(await store.nearDuplicateCandidates(TEXTS[0]!, 'p', 10)).toBeNull();
    expect(await store.fillNearDuplicateIndex()).toEqual({ filled: TEXTS.length, complete: true });
    expect(storedBands(store)).toEqual(expectedBands(store));
  });

  it('a state value that is not JSON counts as no fill: rebuilt, not trusted', async () => {
    await cairn.remember({ text: TEXTS[0]! });
    store.db.prepare('UPDATE state SET value = ? WHERE key = ?').run('{not json', BANDS_STATE_KEY);
    await store.close();
    store = await openSqliteStore(path);
    expect(await store.nearDuplicateCandidates(TEXTS[0]!, 'p', 10)).toBeNull();
    expect((await store.fillNearDuplicateIndex()).complete).toBe(true);
    expect(storedBands(store)).toEqual(expectedBands(store));
  });

  it('restarting the fill (after `cairn copy` wrote rows past the store) distrusts the bands until filled again', async () => {
    for (const text of TEXTS) await cairn.remember({ text });
    // As copy's raw upsert leaves a changed text: the row changed, its bands did not.
    store.db.prepare('UPDATE memories SET text = ? WHERE rowid = 1').run('copied text: the deploy waits for the canary');
    store.restartNearDuplicateFill();
    expect(await store.nearDuplicateCandidates('copied text: the deploy waits for the canary', 'p', 10)).toBeNull();
    expect(await store.fillNearDuplicateIndex()).toEqual({ filled: TEXTS.length, complete: true });
    const found = await store.nearDuplicateCandidates('copied text: the deploy waits for the canary', 'p', 10);
    expect(found?.map((m) => m.text)).toContain('copied text: the deploy waits for the canary');
  });

  it('writes append pending bands, folded into memory_bands every FOLD_AT rows; candidates are the same before and after a fold', async () => {
    const line = (i: number): string => `service${i % 23} retries request ${i} after ${i % 9} s on worker ${i % 17}`;
    const probes = [line(3), line(100), `${line(250)} today`, 'service4 retries request after 4 s on worker 6'];
    // importJsonl writes chunks of 256 in one transaction each: no fold below FOLD_AT rows.
    await cairn.importJsonl(Array.from({ length: FOLD_AT - 10 }, (_, i) => JSON.stringify({ text: line(i) })));
    expect(pendingRows(store)).toBe(FOLD_AT - 10);
    expect(store.db.prepare('SELECT count(*) FROM memory_bands').pluck().get()).toBe(0);
    const before = [];
    for (const probe of probes) before.push(await store.nearDuplicateCandidates(probe, 'p', 64));
    expect(before.every((found) => (found?.length ?? 0) > 0)).toBe(true);
    // A text patch of a pending memory: its newest row stands for its bands.
    const patched = (await cairn.remember({ text: 'the cache is flushed on SIGTERM by the supervisor' })).memory;
    await store.patchMemory(patched.id, { text: 'the cache is flushed on SIGINT and SIGTERM by the supervisor', updatedAt: NOW + 1 }, { memoryId: patched.id, type: 'update', at: NOW + 1, actor: 'test', data: {} });
    expect(storedBands(store)).toEqual(expectedBands(store));
    for (let i = 0; pendingRows(store) > 0; i++) await cairn.remember({ text: `unrelated note ${i}: the dashboard colour is teal number ${i}` });
    expect(storedBands(store)).toEqual(expectedBands(store));
    const folded = store.db.prepare('SELECT count(*) FROM memory_bands').pluck().get() as number;
    expect(folded).toBe((store.db.prepare('SELECT count(*) FROM memories').pluck().get() as number) * BANDS);
    for (const [i, probe] of probes.entries()) expect(await store.nearDuplicateCandidates(probe, 'p', 64)).toEqual(before[i]);
    // A text patch of a folded memory: its old rows leave memory_bands, its new bands are pending.
    const first = { id: store.db.prepare('SELECT id FROM memories ORDER BY rowid LIMIT 1').pluck().get() as string };
    await store.patchMemory(first.id, { text: 'service0 retries request 0 after 0 s on worker 0, then gives up', updatedAt: NOW + 2 }, { memoryId: first.id, type: 'update', at: NOW + 2, actor: 'test', data: {} });
    expect(pendingRows(store)).toBe(1);
    expect(storedBands(store)).toEqual(expectedBands(store));
    const found = await store.nearDuplicateCandidates('service0 retries request 0 after 0 s on worker 0, then gives up', 'p', 64);
    expect(found?.[0]?.id).toBe(first.id);
    // Compaction folds what is pending.
    await store.vacuum();
    expect(pendingRows(store)).toBe(0);
    expect(storedBands(store)).toEqual(expectedBands(store));
  });

  it('the pending rows a store keeps follow another process\'s writes and folds', async () => {
    const other = await openSqliteStore(path);
    const otherCairn = createCairn({ store: other, embedder: null, clock: { now: () => NOW }, project: 'p' });
    try {
      const probe = 'the deploy waits for the canary in region eu-west before promoting';
      const lookup = async (): Promise<string[]> => ((await store.nearDuplicateCandidates(probe, 'p', 64)) ?? []).map((m) => m.text);
      const fresh = async (): Promise<string[]> => {
        const reader = await openSqliteStore(path);
        try {
          return ((await reader.nearDuplicateCandidates(probe, 'p', 64)) ?? []).map((m) => m.text);
        } finally {
          await reader.close();
        }
      };
      await cairn.remember({ text: 'the deploy waits for the canary in region eu-west' });
      expect(await lookup()).toEqual(['the deploy waits for the canary in region eu-west']);
      // The other process appends, then folds everything (this store's rows read included).
      await otherCairn.remember({ text: 'the deploy waits for the canary in region eu-west before it promotes' });
      expect(await lookup()).toEqual(await fresh());
      expect(await lookup()).toHaveLength(2);
      await otherCairn.importJsonl(Array.from({ length: FOLD_AT }, (_, i) => JSON.stringify({ text: `filler ${i}: queue ${i % 13} drains in ${i} ms` })));
      expect(pendingRows(store)).toBe(0);
      await otherCairn.remember({ text: 'the deploy waits for the canary in region eu-west, then promotes' });
      expect(await lookup()).toEqual(await fresh());
      expect(await lookup()).toHaveLength(3);
    } finally {
      await other.close();
    }
  });

  it('a text without index terms has no bands and no candidates', async () => {
    expect(bandKeys('!!! ??? ...', 'p')).toEqual([]);
    expect(await store.nearDuplicateCandidates('!!! ??? ...', 'p', 10)).toEqual([]);
  });
});
