/**
 * The retrieval step shared by recall and context: full text over the query's content words,
 * vectors over the whole query when an embedder and a vector index are there, fused by
 * reciprocal rank. Scoring and cutting are the callers' business.
 */
import { embedOrUnavailable, searchEmbedder, type Deps } from '../deps.js';
import { isCairnError } from '../errors.js';
import { queryTerms } from '../store/tokenize.js';
import type { MemoryFilter, ScoredId } from '../types.js';
import { dot } from '../embed/vector.js';
import type { FusionWeights } from '../deps.js';
import { fusionWeights, reciprocalRankFusion, type FusedHit } from './fusion.js';
import { contentQuery } from './stopwords.js';

/** Vector hits below this cosine are noise, not candidates. */
export const DEFAULT_MIN_COSINE = 0.25;


export interface RetrieveInput {
  query: string;
  filter: MemoryFilter;
  /** Candidates taken from each retriever. */
  limit: number;
  minCosine?: number;
}

export interface Retrieved {
  /** `hybrid` when the vector retriever ran, else `bm25`. */
  mode: 'hybrid' | 'bm25';
  fused: FusedHit[];
  /** The largest fused score possible with the lists that found anything (first in each). */
  maxRrf: number;
  /** The best BM25 score among the candidates, to normalise the others'. */
  bm25Max: number;
  /** The lowest BM25 score among the candidates (the last one the BM25 retriever returned; 0 when none). */
  bm25Min: number;
  /** Distinct index terms of the query's content words (for coverage). */
  terms: string[];
  /**
   * In hybrid mode, the query's cosine with every candidate that has a vector (found by either
   * retriever), and the best of them, so scoring can normalise them; empty and null otherwise.
   */
  cosines: Map<string, number>;
  cosineMax: number | null;
  /** The fusion weights used (they depend on the embedder, see `fusionWeights`). */
  weights: FusionWeights;
}

/** Fused hits whose vectors make the feedback (`FusionWeights.feedback`). */
export const FEEDBACK_HITS = 3;

export async function retrieve(deps: Deps, input: RetrieveInput): Promise<Retrieved> {
  const keywords = contentQuery(input.query);
  // The configured embedder, or the index's own model while a model switch is under way.
  const embedder = await searchEmbedder(deps);
  // Started first and awaited after the vector leg: a store that searches text off this thread
  // (SqliteStore's `textSearch: 'worker'`, PostgreSQL) overlaps the two legs; the results are the same.
  const textSearch = deps.store.searchText(keywords, { ...input.filter, limit: input.limit, ...(embedder ? { alongsideVectors: true } : {}) });
  // Awaited below; a rejection meanwhile must not count as unhandled.
  textSearch.catch(() => {});
  const lists: ScoredId[][] = [];
  const cosines = new Map<string, number>();
  let queryVector: Float32Array | null = null;
  const weights = fusionWeights((embedder ?? deps.embedder)?.model ?? null, deps.fusion);
  const { vectorRankWeight: vectorWeight, rrfK } = weights;
  const floor = input.minCosine ?? DEFAULT_MIN_COSINE;
  if (embedder) {
    [queryVector = null] = (await embedOrUnavailable(deps, [input.query], { purpose: 'query' }, embedder)) ?? [];
    if (queryVector) {
      try {
        const hits = (await deps.store.searchVector(queryVector, embedder, { ...input.filter, limit: input.limit })).filter((h) => h.score >= floor);
        lists.push(await textSearch, hits);
        if (weights.feedback) {
          const first = reciprocalRankFusion(lists, rrfK, [1, vectorWeight]).slice(0, FEEDBACK_HITS).map((f) => f.id);
          const expanded = withFeedback(queryVector, [...(await deps.store.getVectors(first, embedder)).values()], weights.feedback);
          if (expanded) {
            queryVector = expanded;
            lists[1] = (await deps.store.searchVector(queryVector, embedder, { ...input.filter, limit: input.limit })).filter((h) => h.score >= floor);
          }
        }
        for (const hit of lists[1]!) cosines.set(hit.id, hit.score);
      } catch (error) {
        // A model switch committed since the check above: this query runs on BM25.
        if (!isCairnError(error) || error.code !== 'EMBEDDER_MISMATCH') throw error;
        queryVector = null;
        lists.length = 0;
        cosines.clear();
      }
    }
  }
  if (lists.length === 0) lists.push(await textSearch);
  const fused = reciprocalRankFusion(lists, rrfK, [1, vectorWeight]);
  let cosineMax: number | null = null;
  if (queryVector && embedder) {
    // Keyword hits the vector list did not reach still get their cosine, so the two signals
    // are blended for every candidate rather than only for those both retrievers found.
    const missing = fused.filter((f) => !cosines.has(f.id)).map((f) => f.id);
    if (missing.length > 0) {
      for (const [id, vector] of await deps.store.getVectors(missing, embedder)) cosines.set(id, dot(queryVector, vector));
    }
    if (cosines.size > 0) cosineMax = Math.max(...cosines.values());
  }
  return {
    mode: queryVector ? 'hybrid' : 'bm25',
    fused,
    maxRrf: ((lists[0]!.length > 0 ? 1 : 0) + (lists[1]?.length ? vectorWeight : 0)) / (rrfK + 1),
    bm25Max: lists[0]?.[0]?.score ?? 0,
    bm25Min: lists[0]?.at(-1)?.score ?? 0,
    terms: queryTerms(keywords),
    cosines,
    cosineMax,
    weights,
  };
}

/** `query + share × mean(vectors)`, unit length; null when there is nothing to add. */
export function withFeedback(query: Float32Array, vectors: Float32Array[], share: number): Float32Array | null {
  if (vectors.length === 0 || share <= 0) return null;
  const out = Float32Array.from(query);
  for (const vector of vectors) for (let i = 0; i < out.length; i++) out[i]! += (share * (vector[i] ?? 0)) / vectors.length;
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm === 0) return null;
  for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}
