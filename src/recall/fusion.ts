import type { FusionWeights } from '../deps.js';
import type { ScoredId } from '../types.js';

/** The k of reciprocal rank fusion (Cormack et al. 2009; SPEC §4). */
export const RRF_K = 60;

/**
 * Fusion for BM25 alone and for embedders that are not pretrained encoders (static, USE-lite,
 * hash, remote): vectors weigh 0.2 in the rank fusion and half of BM25 in the signal. Measured on
 * SciFact, LoCoMo and CoSQA with USE-lite: equal weights let a weak embedder reorder strong
 * keyword matches (SciFact nDCG@10 0.686 → 0.508); at 0.2 vectors settle near-ties and lift
 * what keywords missed.
 */
export const DEFAULT_FUSION: Readonly<FusionWeights> = { vectorRankWeight: 0.2, vectorSignalShare: 0.5, rrfK: RRF_K };

/**
 * Fusion for the pretrained ONNX encoders (`onnx:…`, e.g. all-MiniLM-L6-v2): vectors weigh 2.5 ×
 * BM25 in the rank fusion and 1.5 × in the signal, RRF k = 8, and the BM25 part of the signal is
 * min–max normalised over the BM25 candidates (`bm25Range`). Chosen with all-MiniLM-L6-v2 on the
 * tuning halves of SciFact, CoSQA and LoCoMo only, by the rule of the first re-tune (the largest
 * mean relative gain over the previous weights, no tuning half losing; grid k 4–8 × w 1.75–2.5 ×
 * share 1.5–2.5 × BM25 by the best or over the range; docs/EMBEDDINGS.md). Against the previous
 * 2 / 2 / k 10 (BM25 by the best), tuning → report halves: LoCoMo recall@5 0.697 → 0.708 and 0.625
 * → 0.639, SciFact nDCG@10 0.768 → 0.768 and 0.696 → 0.697, CoSQA MRR@10 0.455 → 0.455 and 0.529 → 0.530.
 */
export const ENCODER_FUSION: Readonly<FusionWeights> = { vectorRankWeight: 2.5, vectorSignalShare: 1.5, rrfK: 8, bm25Range: true };

/** True for a pretrained sentence encoder run by cairn (model ids `onnx:<name>`). */
export function isPretrainedEncoder(model: string): boolean {
  return model.startsWith('onnx:');
}

/**
 * The fusion weights recall uses with `embedderModel` (null: BM25 alone), `overrides` (benchmarks)
 * taking precedence field by field.
 */
export function fusionWeights(embedderModel: string | null, overrides: Partial<FusionWeights> = {}): FusionWeights {
  const base = embedderModel !== null && isPretrainedEncoder(embedderModel) ? ENCODER_FUSION : DEFAULT_FUSION;
  return { ...base, ...overrides };
}

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
