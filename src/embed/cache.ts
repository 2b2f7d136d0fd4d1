/**
 * An embedding cache in front of any embedder: an in-process LRU plus an optional persistent
 * layer (the store provides one), keyed by model id and the sha256 of the text. Only the misses
 * reach the embedder, in one batch.
 */
import { sha256Hex } from '../runtime.js';
import type { EmbedOptions, Embedder, EmbeddingCacheStore } from '../types.js';

export type { EmbeddingCacheStore };

export interface EmbeddingCacheOptions {
  /** Persistent layer consulted after the LRU and filled with what the embedder computes. */
  persist?: EmbeddingCacheStore;
  /**
   * Vectors kept in process (0 disables the LRU).
   * @default 10000
   */
  lruSize?: number;
}

/**
 * The cache key of `text` under `model`: `<model>#<sha256 hex of the UTF-8 text>`, and
 * `<model>?query#…` for a query (an asymmetric model embeds a query differently).
 */
export function embeddingCacheKey(model: string, text: string, purpose: EmbedOptions['purpose'] = 'document'): string {
  return `${model}${purpose === 'query' ? '?query' : ''}#${sha256Hex(text)}`;
}

/** Least-recently-used map: a Map keeps insertion order, so re-inserting on a hit is enough. */
class Lru {
  private readonly map = new Map<string, Float32Array>();
  constructor(private readonly size: number) {}

  get(key: string): Float32Array | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: string, value: Float32Array): void {
    if (this.size <= 0) return;
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.size) this.map.delete(this.map.keys().next().value!);
  }
}

/**
 * Wrap `embedder` with the cache. The result has the same identity (model, dimension); callers
 * get their own copies of cached vectors, so mutating one never corrupts the cache.
 *
 * @example
 * const embedder = withCache(await loadStaticEmbedder(folder), { persist: store.embeddingCache });
 */
export function withCache(embedder: Embedder, options: EmbeddingCacheOptions = {}): Embedder {
  const lru = new Lru(options.lruSize ?? 10_000);
  const persist = options.persist;

  async function embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]> {
    const keys = texts.map((text) => embeddingCacheKey(embedder.model, text, options?.purpose));
    const found = new Map<string, Float32Array>();
    const missing = new Map<string, string>(); // key → text, deduplicated
    keys.forEach((key, i) => {
      const hit = lru.get(key);
      if (hit) found.set(key, hit);
      else missing.set(key, texts[i]!);
    });
    if (missing.size > 0 && persist) {
      const stored = await persist.get([...missing.keys()]);
      for (const [key, vector] of stored) {
        // A vector of another length is not ours (a changed model): recompute it.
        if (!missing.has(key) || (embedder.dimension > 0 && vector.length !== embedder.dimension)) continue;
        found.set(key, vector);
        lru.set(key, vector);
        missing.delete(key);
      }
    }
    if (missing.size > 0) {
      const missKeys = [...missing.keys()];
      const vectors = await embedder.embed([...missing.values()], options);
      const entries: Array<[string, Float32Array]> = missKeys.map((key, i) => [key, vectors[i]!]);
      for (const [key, vector] of entries) {
        found.set(key, vector);
        lru.set(key, vector);
      }
      if (persist) await persist.put(entries);
    }
    return keys.map((key) => found.get(key)!.slice());
  }

  const cached: Embedder = {
    get model() {
      return embedder.model;
    },
    get dimension() {
      return embedder.dimension;
    },
    embed,
  };
  // A lazily loaded model says whether it is in memory (the MCP server's idle fill asks).
  if ('loaded' in embedder) Object.defineProperty(cached, 'loaded', { get: () => (embedder as { loaded?: boolean }).loaded, enumerable: true });
  if (embedder.close) cached.close = () => embedder.close!();
  if (embedder.availability) cached.availability = (check) => embedder.availability!(check);
  // Token states are not cached: they are recall's rerank, computed for the candidates of the moment.
  if (embedder.tokenStates) cached.tokenStates = (texts) => embedder.tokenStates!(texts);
  // Neither are signatures: a vector from the cache comes without its text's token states.
  if (embedder.embedSigned) cached.embedSigned = (texts, signed) => embedder.embedSigned!(texts, signed);
  return cached;
}
