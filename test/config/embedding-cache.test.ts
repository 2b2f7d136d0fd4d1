import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedEmbedder } from '../../src/config.js';
import { embeddingCacheKey } from '../../src/embed/cache.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder, Store } from '../../src/types.js';

/** An embedder that counts the texts it was asked to embed. */
function countingEmbedder(model: string): Embedder & { calls: string[] } {
  const calls: string[] = [];
  return {
    model,
    dimension: 2,
    calls,
    async embed(texts) {
      calls.push(...texts);
      return texts.map((t) => Float32Array.from([t.length, 1]));
    },
  };
}

describe('the embedding cache wired by openCairn', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-embcache-'));
    store = await openSqliteStore(join(dir, 'cairn.db'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a slow embedder’s vectors in the database: a new process embeds nothing it has seen', async () => {
    const first = countingEmbedder('ollama:nomic');
    await cachedEmbedder(first, 'ollama:nomic@http://127.0.0.1:1', store).embed(['alpha', 'beta', 'alpha']);
    expect(first.calls).toEqual(['alpha', 'beta']);
    // A second process: a fresh LRU, the same database.
    const second = countingEmbedder('ollama:nomic');
    const vectors = await cachedEmbedder(second, 'ollama:nomic@http://127.0.0.1:1', store).embed(['beta', 'gamma']);
    expect(second.calls).toEqual(['gamma']);
    expect(vectors.map((v) => Array.from(v))).toEqual([[4, 1], [5, 1]]);
  });

  it('does not persist what a static or hash embedder computes in microseconds', async () => {
    const cheap = countingEmbedder('hash:v1:2');
    await cachedEmbedder(cheap, 'hash:2', store).embed(['alpha']);
    const again = countingEmbedder('hash:v1:2');
    await cachedEmbedder(again, 'hash:2', store).embed(['alpha']);
    expect(again.calls).toEqual(['alpha']);
    expect((await store.embeddingCache!.get([embeddingCacheKey('hash:v1:2', 'alpha')])).size).toBe(0);
  });
});
