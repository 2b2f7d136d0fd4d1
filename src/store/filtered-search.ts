/**
 * Nearest neighbours that pass a filter, over an in-memory vector index (exact or HNSW) whose
 * keys are row keys: over-fetch, keep the hits the database accepts, widen the fetch when the
 * filter is selective. Both SQL stores search their in-process indexes this way.
 */
import type { ScoredId } from '../types.js';

export interface FilteredSearch {
  /** How many hits to return at most. */
  limit: number;
  /** Keys in the index (a fetch of this many has seen everything). */
  size: number;
  /** The index's nearest `fetch` keys, best first. */
  nearest(fetch: number): Array<{ key: number; score: number }>;
  /** Of these keys, those whose rows pass the filter, with their memory ids. */
  accept(keys: number[]): Map<number, string> | Promise<Map<number, string>>;
}

export async function searchFiltered({ limit, size, nearest, accept }: FilteredSearch): Promise<ScoredId[]> {
  for (let fetch = Math.max(limit * 4, 64); ; fetch *= 4) {
    const hits = nearest(fetch);
    if (hits.length === 0) return [];
    const accepted = await accept(hits.map((h) => h.key));
    const out: ScoredId[] = [];
    for (const hit of hits) {
      const id = accepted.get(hit.key);
      if (id !== undefined) out.push({ id, score: hit.score });
      if (out.length >= limit) break;
    }
    if (out.length >= limit || hits.length < fetch || fetch >= size) return out;
  }
}
