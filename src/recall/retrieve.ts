/**
 * The retrieval step shared by recall and context: full text over the query's content words,
 * vectors over the whole query when an embedder and a vector index are there, fused by
 * reciprocal rank. Scoring and cutting are the callers' business.
 */
import type { Deps } from '../deps.js';
import { queryTerms } from '../store/tokenize.js';
import type { MemoryFilter, ScoredId } from '../types.js';
import { RRF_K, reciprocalRankFusion, type FusedHit } from './fusion.js';
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
  /** Distinct index terms of the query's content words (for coverage). */
  terms: string[];
}

export async function retrieve(deps: Deps, input: RetrieveInput): Promise<Retrieved> {
  const keywords = contentQuery(input.query);
  const lists: ScoredId[][] = [await deps.store.searchText(keywords, { ...input.filter, limit: input.limit })];
  let mode: Retrieved['mode'] = 'bm25';
  if (deps.embedder && deps.store.capabilities.vectors && (await deps.store.vectorModel()) !== null) {
    const [vector] = await deps.embedder.embed([input.query]);
    if (vector) {
      const floor = input.minCosine ?? DEFAULT_MIN_COSINE;
      const hits = await deps.store.searchVector(vector, deps.embedder, { ...input.filter, limit: input.limit });
      lists.push(hits.filter((h) => h.score >= floor));
      mode = 'hybrid';
    }
  }
  return {
    mode,
    fused: reciprocalRankFusion(lists, RRF_K),
    maxRrf: lists.filter((l) => l.length > 0).length / (RRF_K + 1),
    bm25Max: lists[0]?.[0]?.score ?? 0,
    terms: queryTerms(keywords),
  };
}
