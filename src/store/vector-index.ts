/**
 * The in-memory vector index contract used by store backends that keep vectors themselves.
 * `ExactVectorIndex` is brute force over a contiguous Float32Array (exact, fine below ~100K);
 * an approximate index can implement the same interface.
 */
export interface VectorHit {
  key: number;
  score: number;
}

export interface VectorIndex {
  readonly dimension: number;
  readonly size: number;
  upsert(key: number, vector: Float32Array): void;
  remove(key: number): void;
  /** Top `k` keys by cosine (vectors are unit length, so the dot product), optionally filtered. */
  search(query: Float32Array, k: number, accept?: (key: number) => boolean): VectorHit[];
}

export class ExactVectorIndex implements VectorIndex {
  readonly dimension: number;
  private data: Float32Array;
  private keys: number[] = [];
  private slots = new Map<number, number>();

  constructor(dimension: number, initialCapacity = 1024) {
    this.dimension = dimension;
    this.data = new Float32Array(dimension * initialCapacity);
  }

  get size(): number {
    return this.keys.length;
  }

  upsert(key: number, vector: Float32Array): void {
    if (vector.length !== this.dimension) {
      throw new RangeError(`vector has ${vector.length} dimensions, index has ${this.dimension}`);
    }
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.keys.length;
      if ((slot + 1) * this.dimension > this.data.length) {
        const grown = new Float32Array(Math.max(this.data.length * 2, (slot + 1) * this.dimension));
        grown.set(this.data);
        this.data = grown;
      }
      this.keys.push(key);
      this.slots.set(key, slot);
    }
    this.data.set(vector, slot * this.dimension);
  }

  remove(key: number): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    const last = this.keys.length - 1;
    const lastKey = this.keys[last] as number;
    if (slot !== last) {
      this.data.copyWithin(slot * this.dimension, last * this.dimension, (last + 1) * this.dimension);
      this.keys[slot] = lastKey;
      this.slots.set(lastKey, slot);
    }
    this.keys.pop();
    this.slots.delete(key);
  }

  /** Every key with a view of its vector (valid until the next write). */
  *entries(): Generator<{ key: number; vector: Float32Array }> {
    for (let slot = 0; slot < this.keys.length; slot++) {
      yield { key: this.keys[slot] as number, vector: this.data.subarray(slot * this.dimension, (slot + 1) * this.dimension) };
    }
  }

  search(query: Float32Array, k: number, accept?: (key: number) => boolean): VectorHit[] {
    const dim = this.dimension;
    const data = this.data;
    const hits: VectorHit[] = [];
    let floor = -Infinity;
    for (let slot = 0; slot < this.keys.length; slot++) {
      let dot = 0;
      const base = slot * dim;
      for (let i = 0; i < dim; i++) dot += (data[base + i] as number) * (query[i] as number);
      if (hits.length >= k && dot <= floor) continue;
      const key = this.keys[slot] as number;
      if (accept && !accept(key)) continue;
      insertSorted(hits, { key, score: dot }, k);
      if (hits.length >= k) floor = (hits[hits.length - 1] as VectorHit).score;
    }
    return hits;
  }
}

function insertSorted(hits: VectorHit[], hit: VectorHit, k: number): void {
  let i = hits.length;
  while (i > 0 && (hits[i - 1] as VectorHit).score < hit.score) i--;
  hits.splice(i, 0, hit);
  if (hits.length > k) hits.pop();
}
