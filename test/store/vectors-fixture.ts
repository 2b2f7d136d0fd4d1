/**
 * Seeded clustered unit vectors for vector-index tests: points scattered around random centres,
 * which is what text embeddings look like (uniform random vectors make every neighbour equally
 * far and say little about an approximate index).
 */
import { createRng } from '../../bench/src/prng.js';

export interface ClusteredOptions {
  seed: number;
  count: number;
  dimension: number;
  clusters: number;
  queries: number;
  /** Spread around each centre (centres have unit-variance coordinates). @default 0.6 */
  spread?: number;
}

export function clusteredVectors(options: ClusteredOptions): { vectors: Float32Array[]; queries: Float32Array[] } {
  const rng = createRng(options.seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(rng.next() + 1e-12)) * Math.cos(2 * Math.PI * rng.next());
  const spread = options.spread ?? 0.6;
  const centres = Array.from({ length: options.clusters }, () => Float32Array.from({ length: options.dimension }, gauss));
  const around = (): Float32Array => {
    const centre = centres[rng.int(centres.length)] as Float32Array;
    const v = centre.map((x) => x + spread * gauss());
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  return {
    vectors: Array.from({ length: options.count }, around),
    queries: Array.from({ length: options.queries }, around),
  };
}
