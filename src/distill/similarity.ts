/**
 * Near-duplicate detection without an embedder: word shingles (unigrams and bigrams) compared by
 * Jaccard, MinHash signatures with LSH banding to find similar pairs among many memories without
 * comparing every pair, and negation polarity to tell "always X" from "never X".
 */
import { words } from './text.js';

/** Shingle Jaccard at or above which two memories say the same thing. */
export const NEAR_DUPLICATE_JACCARD = 0.55;
/** Cosine at or above which two memories say the same thing (when an embedder is present). */
export const NEAR_DUPLICATE_COSINE = 0.92;
/** Shingle Jaccard at or above which two memories are about the same thing (for contradictions). */
export const SAME_TOPIC_JACCARD = 0.45;

/** Words of a text as shingles: every word and every pair of adjacent words. */
export function shingles(text: string): Set<string> {
  const w = words(text.normalize('NFKC'));
  const out = new Set<string>(w);
  for (let i = 0; i + 1 < w.length; i++) out.add(`${w[i]} ${w[i + 1]}`);
  return out;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const s of small) if (large.has(s)) shared++;
  return shared / (a.size + b.size - shared);
}

export function textSimilarity(a: string, b: string): number {
  return jaccard(shingles(a), shingles(b));
}

/** FNV-1a, 32 bits. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A 32-bit mix (murmur3 finaliser) of a hash with a seed: one of the MinHash permutations. */
function mix(h: number, seed: number): number {
  let x = (h ^ seed) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

export const MINHASH_SIZE = 64;
const SEEDS = Array.from({ length: MINHASH_SIZE }, (_, i) => mix(0x9e3779b9, i + 1));

/** MinHash signature of a shingle set: the minimum of each of 64 hash permutations. */
export function minhash(set: ReadonlySet<string>): Uint32Array {
  const sig = new Uint32Array(MINHASH_SIZE).fill(0xffffffff);
  for (const s of set) {
    const h = fnv1a(s);
    for (let i = 0; i < MINHASH_SIZE; i++) {
      const v = mix(h, SEEDS[i] as number);
      if (v < (sig[i] as number)) sig[i] = v;
    }
  }
  return sig;
}

/** The share of equal MinHash entries: an estimate of the Jaccard similarity. */
export function minhashSimilarity(a: Uint32Array, b: Uint32Array): number {
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  return same / a.length;
}

/**
 * Pairs of items whose MinHash signatures agree on at least one band (16 bands of 4 rows: pairs
 * near Jaccard 0.5 and above are found with high probability). Returned as index pairs i < j.
 */
export function lshPairs(signatures: readonly Uint32Array[], bands = 16): Array<[number, number]> {
  const rows = MINHASH_SIZE / bands;
  const pairs = new Set<string>();
  const out: Array<[number, number]> = [];
  for (let band = 0; band < bands; band++) {
    const buckets = new Map<string, number[]>();
    signatures.forEach((sig, index) => {
      const key = Array.from(sig.subarray(band * rows, band * rows + rows)).join(',');
      const bucket = buckets.get(key);
      if (bucket) bucket.push(index);
      else buckets.set(key, [index]);
    });
    for (const bucket of buckets.values()) {
      if (bucket.length < 2 || bucket.length > 200) continue;
      for (let x = 0; x < bucket.length; x++) {
        for (let y = x + 1; y < bucket.length; y++) {
          const i = bucket[x] as number;
          const j = bucket[y] as number;
          const key = `${i},${j}`;
          if (pairs.has(key)) continue;
          pairs.add(key);
          out.push([i, j]);
        }
      }
    }
  }
  return out;
}

const NEGATION =
  /(?:^|[^\p{L}])(?:not|never|don't|do not|dont|doesn't|no|avoid|without|shouldn't|mustn't|can't|cannot|won't|не|нет|никогда|ні|ніколи|nicht|nie|niemals|kein|keine|pas|jamais|nunca|não|nao)(?=$|[^\p{L}])|不|别|没|ない|な[いく]/iu;

/** Whether a text is negative ("never…", "don't…", "not…"). */
export function isNegative(text: string): boolean {
  return NEGATION.test(text.toLowerCase());
}

/** Two texts about the same thing, one negative and one positive: a likely contradiction. */
export function opposite(a: string, b: string): boolean {
  return isNegative(a) !== isNegative(b);
}
