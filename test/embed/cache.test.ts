import { describe, expect, it } from 'vitest';
import { embeddingCacheKey, withCache, type EmbeddingCacheStore } from '../../src/embed/cache.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import type { Embedder } from '../../src/types.js';

function counting(inner: Embedder): Embedder & { calls: string[][] } {
  const calls: string[][] = [];
  return { model: inner.model, dimension: inner.dimension, calls, embed: (texts) => (calls.push(texts), inner.embed(texts)) };
}

function memoryStore(): EmbeddingCacheStore & { map: Map<string, Float32Array>; gets: string[][] } {
  const map = new Map<string, Float32Array>();
  const gets: string[][] = [];
  return {
    map,
    gets,
    get: async (keys) => (gets.push(keys), new Map(keys.filter((k) => map.has(k)).map((k) => [k, map.get(k)!]))),
    put: async (entries) => void entries.forEach(([k, v]) => map.set(k, v)),
  };
}

describe('embedding cache', () => {
  it('keeps the identity and returns the same vectors as the embedder', async () => {
    const inner = createHashEmbedder({ dimension: 32 });
    const cached = withCache(inner);
    expect(cached.model).toBe(inner.model);
    expect(cached.dimension).toBe(32);
    const texts = ['alpha beta', 'gamma', 'alpha beta'];
    expect(await cached.embed(texts)).toEqual(await inner.embed(texts));
  });

  it('batches only the misses, deduplicated, and serves repeats from memory', async () => {
    const inner = counting(createHashEmbedder());
    const cached = withCache(inner);
    await cached.embed(['a', 'b', 'a']);
    await cached.embed(['b', 'c', 'a']);
    expect(inner.calls).toEqual([['a', 'b'], ['c']]);
  });

  it('passes the purpose through and keeps a query apart from the same text stored (asymmetric models)', async () => {
    const purposes: Array<string | undefined> = [];
    const inner = createHashEmbedder();
    const cached = withCache({ model: inner.model, dimension: inner.dimension, embed: (texts, options) => (purposes.push(options?.purpose), inner.embed(texts)) });
    await cached.embed(['staging cluster'], { purpose: 'query' });
    await cached.embed(['staging cluster']);
    await cached.embed(['staging cluster'], { purpose: 'query' });
    expect(purposes).toEqual(['query', undefined]);
    expect(embeddingCacheKey('m', 'x', 'query')).not.toBe(embeddingCacheKey('m', 'x'));
    expect(embeddingCacheKey('m', 'x', 'document')).toBe(embeddingCacheKey('m', 'x'));
  });

  it('evicts the least recently used vector', async () => {
    const inner = counting(createHashEmbedder());
    const cached = withCache(inner, { lruSize: 2 });
    await cached.embed(['a', 'b']);
    await cached.embed(['a']); // a is now the most recent
    await cached.embed(['c']); // evicts b
    await cached.embed(['a', 'b']);
    expect(inner.calls).toEqual([['a', 'b'], ['c'], ['b']]);
  });

  it('reads and fills the persistent layer, keyed by model and text hash', async () => {
    const store = memoryStore();
    const first = counting(createHashEmbedder());
    await withCache(first, { persist: store }).embed(['x', 'y']);
    expect([...store.map.keys()]).toEqual([embeddingCacheKey(first.model, 'x'), embeddingCacheKey(first.model, 'y')]);
    expect(embeddingCacheKey('m', 'x')).toMatch(/^m#[0-9a-f]{64}$/);

    // A new process: empty LRU, same store — nothing is recomputed.
    const second = counting(createHashEmbedder());
    const vectors = await withCache(second, { persist: store }).embed(['y', 'x']);
    expect(second.calls).toEqual([]);
    expect(vectors).toEqual(await createHashEmbedder().embed(['y', 'x']));

    // Another model does not see the first model's entries.
    const other = counting(createHashEmbedder({ dimension: 16 }));
    await withCache(other, { persist: store }).embed(['x']);
    expect(other.calls).toEqual([['x']]);
  });

  it('hands out copies, so a caller mutating a vector cannot corrupt the cache', async () => {
    const cached = withCache(createHashEmbedder());
    const [first] = await cached.embed(['stable']);
    first!.fill(0);
    const [second] = await cached.embed(['stable']);
    expect(second!.some((x) => x !== 0)).toBe(true);
  });

  it('passes errors through instead of swallowing them', async () => {
    const failing: Embedder = { model: 'm', dimension: 2, embed: () => Promise.reject(new Error('boom')) };
    await expect(withCache(failing).embed(['a'])).rejects.toThrow('boom');
  });
});
