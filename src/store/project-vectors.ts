/**
 * Every stored vector grouped by the project of its memory, quantized to int8, searched exactly.
 *
 * A project-filtered search over one HNSW graph of the whole store walks the graph for everyone's
 * memories and then drops the other projects' hits: when the project and the user-wide memories
 * hold a fifth of the store, the first 200 neighbours leave fewer than the 50 wanted for ~45% of
 * queries, which then search again four times wider. An exact scan of the project's own vectors
 * (plus the user-wide ones) has no such miss, finds the true nearest rather than approximate ones,
 * and at a few tens of thousands of int8 vectors costs less than the HNSW walk (usearch's
 * SIMD `exactSearch`; measured figures in docs/EMBEDDINGS.md).
 *
 * Each vector is scaled so its largest component is ±127 and compared by cosine, which ignores the
 * scale: on the 100K MiniLM bench corpus the int8 top 10 / top 50 matched the float32 exact ones
 * for 0.995 / 0.994 of the entries, and scores moved by ~0.001. A memory's project never changes
 * (no store update touches it) and memories are never deleted, only flagged, so grouping by the
 * project at the time a vector is written stays true; the caller still checks every hit against
 * its full filter.
 */
import type { UsearchModule } from './ann-index.js';
import type { VectorHit } from './vector-index.js';

interface Group {
  keys: number[];
  slots: Map<number, number>;
  data: Int8Array;
}

export class ProjectVectors {
  private readonly groups = new Map<string | null, Group>();
  private count = 0;

  constructor(
    private readonly usearch: UsearchModule,
    readonly dimension: number,
  ) {}

  /** Vectors held, all projects. */
  get size(): number {
    return this.count;
  }

  /** Vectors held for these projects (null: user-wide memories). */
  sizeOf(projects: ReadonlyArray<string | null>): number {
    let total = 0;
    for (const project of projects) total += this.groups.get(project)?.keys.length ?? 0;
    return total;
  }

  /** Add or replace the vector of `key`, a memory of `project`. */
  upsert(key: number, project: string | null, vector: Float32Array | Uint8Array): void {
    const dim = this.dimension;
    let group = this.groups.get(project);
    if (!group) this.groups.set(project, (group = { keys: [], slots: new Map(), data: new Int8Array(dim * 64) }));
    let slot = group.slots.get(key);
    if (slot === undefined) {
      slot = group.keys.length;
      if ((slot + 1) * dim > group.data.length) {
        const grown = new Int8Array(Math.max(group.data.length * 2, (slot + 1) * dim));
        grown.set(group.data);
        group.data = grown;
      }
      group.keys.push(key);
      group.slots.set(key, slot);
      this.count++;
    }
    quantizeInto(asFloats(vector, dim), group.data, slot * dim);
  }

  /**
   * The `k` nearest keys among these projects' vectors, by cosine (int8), best first. Scores are
   * cosines of the quantized vectors.
   */
  nearest(projects: ReadonlyArray<string | null>, query: Float32Array, k: number): VectorHit[] {
    const dim = this.dimension;
    const q = new Int8Array(dim);
    quantizeInto(query, q, 0);
    const hits: VectorHit[] = [];
    for (const project of new Set(projects)) {
      const group = this.groups.get(project);
      if (!group || group.keys.length === 0) continue;
      const rows = group.keys.length;
      const found = this.usearch.exactSearch(group.data.subarray(0, rows * dim), q, dim, Math.min(k, rows), this.usearch.MetricKind.Cos, 1) as {
        keys: BigUint64Array;
        distances: Float32Array;
      };
      for (let i = 0; i < found.keys.length; i++) {
        const distance = found.distances[i] as number;
        hits.push({ key: group.keys[Number(found.keys[i])] as number, score: Number.isFinite(distance) ? 1 - distance : 0 });
      }
    }
    hits.sort((a, b) => b.score - a.score);
    if (hits.length > k) hits.length = k;
    return hits;
  }
}

/** A stored vector's bytes as floats (copied when unaligned). */
function asFloats(vector: Float32Array | Uint8Array, dim: number): Float32Array {
  if (vector instanceof Float32Array) return vector;
  if (vector.byteOffset % 4 === 0) return new Float32Array(vector.buffer, vector.byteOffset, dim);
  return new Float32Array(Uint8Array.from(vector).buffer, 0, dim);
}

/** Scale `vector` so its largest component is ±127 and write it at `out[offset..]`. */
function quantizeInto(vector: Float32Array, out: Int8Array, offset: number): void {
  let max = 0;
  for (let i = 0; i < vector.length; i++) {
    const a = Math.abs(vector[i] as number);
    if (a > max) max = a;
  }
  const scale = max > 0 ? 127 / max : 0;
  for (let i = 0; i < vector.length; i++) out[offset + i] = Math.round((vector[i] as number) * scale);
}
