import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { findSimilar } from '../../src/memory/similar.js';
import { decodeTerms, TERMS_STATE_KEY } from '../../src/store/sqlite/memory-terms.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { indexTerms } from '../../src/store/tokenize.js';

const NOW = Date.UTC(2026, 0, 1);

function storedTerms(store: SqliteStore, id: string): string[] | null {
  return decodeTerms(store.db.prepare('SELECT terms FROM memories WHERE id = ?').pluck().get(id) as string | null);
}

describe('stored index terms (memories.terms) for the near-duplicate check', () => {
  let root: string;
  let path: string;
  let store: SqliteStore;
  let cairn: Cairn;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-terms-'));
    path = join(root, 'cairn.db');
    store = await openSqliteStore(path);
    cairn = createCairn({ store, embedder: null, clock: { now: () => NOW }, project: 'p' });
  });

  afterEach(async () => {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('every writer of a text stores its distinct index terms; a text changed without them loses them', async () => {
    const text = 'resolveManifest in src/package/pluginTrace.ts:462 is slow, slow on large batches';
    const { memory } = await cairn.remember({ text });
    expect(storedTerms(store, memory.id)).toEqual([...new Set(indexTerms(text))]);
    const patched = 'the worker pool restarts after 3 failures of the health probe';
    await store.patchMemory(memory.id, { text: patched, updatedAt: NOW + 1 }, { memoryId: memory.id, type: 'update', at: NOW + 1, actor: 'test', data: {} });
    expect(storedTerms(store, memory.id)).toEqual([...new Set(indexTerms(patched))]);
    await cairn.importJsonl([JSON.stringify({ text: 'imported: flush the cache on SIGTERM' })]);
    const imported = store.db.prepare("SELECT id FROM memories WHERE text LIKE 'imported:%'").pluck().get() as string;
    expect(storedTerms(store, imported)).toEqual([...new Set(indexTerms('imported: flush the cache on SIGTERM'))]);
    // A raw change of the text (as a copy's upsert makes) clears them: never stale.
    store.db.prepare('UPDATE memories SET text = ? WHERE id = ?').run('copied over: another text', memory.id);
    expect(store.db.prepare('SELECT terms FROM memories WHERE id = ?').pluck().get(memory.id)).toBeNull();
    expect(decodeTerms('t1 old terms')).toBeNull();
    expect(decodeTerms(null)).toBeNull();
  });

  it('the check reads the stored terms when they are of this terms version, else tokenizes the text', async () => {
    const { memory } = await cairn.remember({ text: 'run migrations before the seed script, never after it' });
    const probe = 'run migrations before the seed script, never after it again';
    const exact = await findSimilar(cairn.deps, probe, null, 'p');
    expect(exact.map((m) => m.id)).toEqual([memory.id]);
    // Stored terms equal to the probe's: the check reports similarity 1, so it read them.
    const probeTerms = [...new Set(indexTerms(probe))];
    store.db.prepare('UPDATE memories SET terms = ? WHERE id = ?').run(`t2 ${probeTerms.join(' ')}`, memory.id);
    expect((await findSimilar(cairn.deps, probe, null, 'p'))[0]?.similarity).toBe(1);
    // Another version's value is not read: the text is tokenized, as before.
    store.db.prepare('UPDATE memories SET terms = ? WHERE id = ?').run(`t1 ${probeTerms.join(' ')}`, memory.id);
    expect(await findSimilar(cairn.deps, probe, null, 'p')).toEqual(exact);
  });

  it('a store written before the column is filled a chunk at a time, with the same results', async () => {
    for (let i = 0; i < 50; i++) await cairn.remember({ text: `note ${i}: service ${i % 7} listens on port ${8000 + (i % 5)}` });
    const probe = 'note 3: service 3 listens on port 8003 today';
    const before = await findSimilar(cairn.deps, probe, null, 'p');
    expect(before.length).toBeGreaterThan(0);
    // As migration 015 leaves an older store: no terms, no state.
    store.db.prepare('UPDATE memories SET terms = NULL').run();
    store.db.prepare('DELETE FROM state WHERE key = ?').run(TERMS_STATE_KEY);
    await store.close();
    store = await openSqliteStore(path);
    cairn = createCairn({ store, embedder: null, clock: { now: () => NOW }, project: 'p' });
    expect(await findSimilar(cairn.deps, probe, null, 'p')).toEqual(before);
    expect(await store.fillNearDuplicateIndex({ chunk: 20, maxChunks: 1 })).toEqual({ filled: 0, complete: false });
    expect(store.db.prepare('SELECT count(*) FROM memories WHERE terms IS NOT NULL').pluck().get()).toBe(20);
    expect((await store.fillNearDuplicateIndex({ chunk: 20 })).complete).toBe(true);
    expect(store.db.prepare('SELECT count(*) FROM memories WHERE terms IS NULL').pluck().get()).toBe(0);
    const rows = store.db.prepare('SELECT text, terms FROM memories').all() as Array<{ text: string; terms: string }>;
    for (const row of rows) expect(decodeTerms(row.terms)).toEqual([...new Set(indexTerms(row.text))]);
    expect(await findSimilar(cairn.deps, probe, null, 'p')).toEqual(before);
  });
});
