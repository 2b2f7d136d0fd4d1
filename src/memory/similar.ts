import type { Deps } from '../deps.js';
import type { Memory } from '../types.js';
import { indexTerms } from '../store/tokenize.js';

/** Jaccard similarity of two texts' index-term sets. */
export function termJaccard(a: string, b: string): number {
  return setJaccard(new Set(indexTerms(a)), b);
}

/** Jaccard similarity of a term set (made once per probe) and a text's index-term set (or its distinct index terms, when stored). */
function setJaccard(setA: ReadonlySet<string>, b: string, storedTerms?: readonly string[]): number {
  // Stored terms are distinct already (`MemoryText.terms`): counted as they are, with no set made
  // of them (this pass was ~0.44 ms of a remember's CPU at 100K, with its ~64 sets).
  const termsB = storedTerms ?? new Set(indexTerms(b));
  const sizeB = storedTerms ? storedTerms.length : (termsB as Set<string>).size;
  if (setA.size === 0 || sizeB === 0) return 0;
  let shared = 0;
  for (const term of termsB) if (setA.has(term)) shared++;
  return shared / (setA.size + sizeB - shared);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

export interface SimilarMemory {
  id: string;
  text: string;
  kind: Memory['kind'];
  /** 0..1: the larger of term overlap (Jaccard) and cosine similarity. */
  similarity: number;
}

/**
 * Band candidates checked at most, most shared bands first. A near-duplicate at the threshold
 * shares 4 of 64 bands on average, a template sibling at Jaccard 0.4 about 1.6, so the count
 * ranks them loosely: 32 candidates missed some the full-text probe found (top five worse than
 * the probe's for 11 of 800 real memories), 64 nearly none (3 of 800; docs/BENCHMARKS.md `## write`).
 */
const BAND_CANDIDATES = 64;

/** Thresholds above which two memories are called near-duplicates. */
export const NEAR_DUPLICATE = { jaccard: 0.5, cosine: 0.9 } as const;

/**
 * Active memories in the same project that say nearly the same thing as `text`: candidates from
 * full-text and vector search, kept when their term overlap or cosine passes the threshold.
 */
export async function findSimilar(
  deps: Deps,
  text: string,
  vector: Float32Array | null,
  project: string | null,
  excludeId?: string,
): Promise<SimilarMemory[]> {
  const filter = project === null ? { project: null } : { project };
  // Candidates from the store's band index when it has a complete one (no ranking: every memory
  // likely to share half the text's terms); else probe with the text's rarest terms: a memory
  // sharing half its terms shares some of those, and matching every term of a long text costs a
  // pass over much of the index.
  const model = deps.embedder;
  // With a vector, the candidates come with theirs (the stored model's) where the store can.
  const banded = deps.store.nearDuplicateCandidates ? await deps.store.nearDuplicateCandidates(text, project, BAND_CANDIDATES, vector && model ? model : undefined) : null;
  const known = new Map((banded ?? []).map((memory) => [memory.id, memory]));
  const ids = new Set(banded ? known.keys() : (await deps.store.searchText(text, { ...filter, limit: 20, rarestTerms: 8 })).map((hit) => hit.id));
  if (vector && model) {
    for (const hit of await deps.store.searchVector(vector, model, { ...filter, limit: 10 })) ids.add(hit.id);
  }
  if (excludeId) ids.delete(excludeId);
  if (ids.size === 0) return [];
  // Only id, text and kind are read: the store's light fetch when it has one.
  const missing = [...ids].filter((id) => !known.has(id));
  const fetched = missing.length === 0 ? [] : deps.store.getMemoryTexts ? await deps.store.getMemoryTexts(missing) : await deps.store.getMemories(missing);
  for (const memory of fetched) known.set(memory.id, memory);
  const memories = [...ids].flatMap((id) => known.get(id) ?? []);
  const vectors = new Map<string, Float32Array>();
  if (vector && model) {
    for (const memory of memories) if (memory.vector) vectors.set(memory.id, memory.vector);
    const unread = [...ids].filter((id) => !vectors.has(id));
    if (unread.length > 0) for (const [id, other] of await deps.store.getVectors(unread, model)) vectors.set(id, other);
  }
  const terms = new Set(indexTerms(text));
  const out: SimilarMemory[] = [];
  for (const memory of memories) {
    const jaccard = setJaccard(terms, memory.text, 'terms' in memory ? memory.terms : undefined);
    const other = vectors.get(memory.id);
    const cos = vector && other ? cosine(vector, other) : 0;
    if (jaccard >= NEAR_DUPLICATE.jaccard || cos >= NEAR_DUPLICATE.cosine) {
      out.push({ id: memory.id, text: memory.text, kind: memory.kind, similarity: Math.max(jaccard, cos) });
    }
  }
  // Ties by id (oldest first): the same answer whichever search found the candidates, in whatever order.
  return out.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, 5);
}
