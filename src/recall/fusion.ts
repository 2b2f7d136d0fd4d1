import type { ScoredId } from '../types.js';

/** The k of reciprocal rank fusion (Cormack et al. 2009; SPEC §4). */
export const RRF_K = 60;

export interface FusedHit {
  id: string;
  /** Sum over lists of weight / (k + rank), rank starting at 1. */
  rrf: number;
  /** 1-based rank in each input list, or null when absent from it. */
  ranks: Array<number | null>;
  /** Raw score in each input list, or null. */
  scores: Array<number | null>;
}

/**
 * Fuse ranked lists by reciprocal rank; ties keep the order of first appearance. `weights`
 * scales each list's contribution (default 1 each).
 */
export function reciprocalRankFusion(lists: ScoredId[][], k: number = RRF_K, weights?: readonly number[]): FusedHit[] {
  const fused = new Map<string, FusedHit>();
  lists.forEach((list, listIndex) => {
    const weight = weights?.[listIndex] ?? 1;
    list.forEach((hit, position) => {
      let entry = fused.get(hit.id);
      if (!entry) {
        entry = { id: hit.id, rrf: 0, ranks: lists.map(() => null), scores: lists.map(() => null) };
        fused.set(hit.id, entry);
      }
      entry.rrf += weight / (k + position + 1);
      entry.ranks[listIndex] = position + 1;
      entry.scores[listIndex] = hit.score;
    });
  });
  return [...fused.values()].sort((a, b) => b.rrf - a.rrf);
}
