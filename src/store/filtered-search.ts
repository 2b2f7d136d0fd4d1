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
  /**
   * Keys judged per `accept` call, best first, stopping once `limit` passed: an in-process
   * database asks about few keys past the last hit it needs; a remote one saves round trips.
   * @default Infinity
   */
  acceptChunk?: number;
}

export async function searchFiltered({ limit, size, nearest, accept, acceptChunk = Infinity }: FilteredSearch): Promise<ScoredId[]> {
  // What the database said about each key so far (null: rejected): a wider fetch asks only about new keys.
  const known = new Map<number, string | null>();
  for (let fetch = Math.max(limit * 4, 64); ; fetch *= 4) {
    const hits = nearest(fetch);
    if (hits.length === 0) return [];
    const out: ScoredId[] = [];
    // Best first, a chunk at a time: the keys past the `limit`-th accepted one are never asked about.
    for (let start = 0; start < hits.length && out.length < limit; start += acceptChunk) {
      const chunk = hits.slice(start, start + acceptChunk);
      const unknown = chunk.filter((h) => !known.has(h.key)).map((h) => h.key);
      if (unknown.length > 0) {
        const accepted = await accept(unknown);
        for (const key of unknown) known.set(key, accepted.get(key) ?? null);
      }
      for (const hit of chunk) {
        const id = known.get(hit.key);
        if (id !== undefined && id !== null) out.push({ id, score: hit.score });
        if (out.length >= limit) break;
      }
    }
    if (out.length >= limit || hits.length < fetch || fetch >= size) return out;
  }
}
