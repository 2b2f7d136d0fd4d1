import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { findSimilar } from '../../src/memory/similar.js';
import { indexTerms } from '../../src/store/tokenize.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/types.js';

describe('near-duplicate check', () => {
  let root: string;
  let store: SqliteStore;
  let cairn: Cairn;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-similar-'));
    store = await openSqliteStore(join(root, 'cairn.db'));
    cairn = createCairn({ store, embedder: null, clock: { now: () => Date.UTC(2026, 0, 1) }, project: 'p' });
  });

  afterEach(async () => {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('getMemoryTexts gives id, text, kind and the stored distinct terms in the order asked, leaving unknown ids out', async () => {
    const a = await cairn.remember({ text: 'the cache is flushed on SIGTERM', kind: 'fact' });
    const b = await cairn.remember({ text: 'run migrations before the seed script, then run it again', kind: 'procedure' });
    const texts = await store.getMemoryTexts([b.memory.id, 'missing', a.memory.id]);
    expect(texts.map(({ terms: _terms, ...rest }) => rest)).toEqual([
      { id: b.memory.id, text: 'run migrations before the seed script, then run it again', kind: 'procedure' },
      { id: a.memory.id, text: 'the cache is flushed on SIGTERM', kind: 'fact' },
    ]);
    // The terms the near-duplicate check would tokenize, each once.
    expect([...texts[0]!.terms!].sort()).toEqual([...new Set(indexTerms(b.memory.text))].sort());
    expect([...texts[1]!.terms!].sort()).toEqual([...new Set(indexTerms(a.memory.text))].sort());
    expect(await store.getMemoryTexts([])).toEqual([]);
  });

  it('finds the same near-duplicates through getMemoryTexts as through getMemories', async () => {
    const texts = [
      'resolveManifest in src/package/pluginTrace.ts:462 is slow on large batches',
      'resolveManifest in src/package/pluginTrace.ts:462 is slow on very large batches',
      'resolveManifest is slow on large batches, see src/package/pluginTrace.ts',
      'the worker pool restarts after 3 failures',
    ];
    for (const text of texts) await cairn.remember({ text });
    const probe = 'resolveManifest in src/package/pluginTrace.ts:462 is slow on large rate batches';
    const withTexts = await findSimilar(cairn.deps, probe, null, 'p');
    // The same store without the optional method: findSimilar falls back to getMemories.
    const plain = new Proxy(store, { get: (target, key) => (key === 'getMemoryTexts' ? undefined : Reflect.get(target, key, target)) }) as Store;
    const withMemories = await findSimilar({ ...cairn.deps, store: plain }, probe, null, 'p');
    expect(withTexts.length).toBeGreaterThanOrEqual(2);
    expect(withTexts).toEqual(withMemories);
  });
});
