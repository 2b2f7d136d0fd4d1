/**
 * A deterministic, dependency-free embedder: feature hashing of the code-aware index terms.
 *
 * It knows nothing about meaning — texts are close only when they share terms — but it is exact,
 * instant and stable across machines, which makes it the embedder tests use to exercise the vector
 * path, and a floor to measure real embedders against.
 */
import { invalid } from '../errors.js';
import { indexTerms } from '../store/tokenize.js';
import type { Embedder } from '../types.js';
import { normalizeInPlace } from './vector.js';

export interface HashEmbedderOptions {
  /**
   * Number of dimensions (hash buckets).
   * @default 64
   */
  dimension?: number;
}

/** FNV-1a over UTF-16 code units, 32 bits. */
function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Embed `text` by hashing each index term into a bucket with a ±1 sign (from a second hash, so
 * collisions cancel out on average), weighting repeated terms by 1 + ln(count).
 * A text without any term maps to a fixed unit vector so the output is always unit length.
 */
function hashVector(text: string, dimension: number): Float32Array {
  const counts = new Map<string, number>();
  for (const term of indexTerms(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
  const vector = new Float32Array(dimension);
  if (counts.size === 0) {
    vector[0] = 1;
    return vector;
  }
  for (const [term, count] of counts) {
    const bucket = fnv1a(term) % dimension;
    const sign = (fnv1a(term, 0x9e3779b9) & 1) === 0 ? 1 : -1;
    vector[bucket]! += sign * (1 + Math.log(count));
  }
  normalizeInPlace(vector);
  // Every term cancelled out (possible with few buckets): fall back to the fixed vector.
  if (vector.every((x) => x === 0)) vector[0] = 1;
  return vector;
}

/**
 * Create the feature-hashing embedder. Model id `hash:v1:<dimension>`.
 *
 * @example
 * const embedder = createHashEmbedder({ dimension: 128 });
 * const [a, b] = await embedder.embed(['parse the config file', 'config file parser']);
 */
export function createHashEmbedder(options: HashEmbedderOptions = {}): Embedder {
  const dimension = options.dimension ?? 64;
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > 65_536) {
    throw invalid(`hash embedder dimension must be an integer in 1..65536, got ${dimension}`, 'dimension');
  }
  return {
    model: `hash:v1:${dimension}`,
    dimension,
    embed: (texts) => Promise.resolve(texts.map((text) => hashVector(text, dimension))),
  };
}
