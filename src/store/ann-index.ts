/**
 * An approximate nearest-neighbour (HNSW) vector index on top of the `usearch` native package,
 * implementing the same `VectorIndex` contract as `ExactVectorIndex`.
 *
 * `usearch` is imported lazily ({@link loadUsearch}) so processes that never search vectors never
 * load the native binary; when it cannot be loaded the caller keeps the exact index.
 *
 * An index opened with {@link HnswVectorIndex.view} memory-maps a saved file (a few ms at 100K,
 * against ~50 ms to read it whole) and is immutable: rows written after it was saved go to a small
 * exact `delta`, and the mapped copies of the keys they replace are `shadowed` (left out of hits).
 * {@link HnswVectorIndex.materialize} turns it into a mutable in-memory index when the delta grows.
 *
 * A mutable index does not insert a written row into the graph either: the row waits in the same
 * exact delta (searched exactly, so nothing pending is missed) and every {@link FOLD_AT} rows the
 * delta is added to the graph in one batch ({@link HnswVectorIndex.fold}; a save
 * folds first). One insert into a 100K-vector graph cost ~1.9 ms of every remember with vectors.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type * as Usearch from 'usearch';
import { ExactVectorIndex, type VectorHit, type VectorIndex } from './vector-index.js';

export type UsearchModule = typeof Usearch;

/**
 * Load `usearch`, or return the reason it cannot be loaded (missing package, no prebuilt binary
 * for this platform). Node caches the module, so repeated calls are cheap.
 */
export async function loadUsearch(): Promise<{ module: UsearchModule } | { error: string }> {
  try {
    const module = (await import('usearch')) as UsearchModule;
    // The native binding is loaded on import; constructing an index proves it works here.
    new module.Index({ dimensions: 2, metric: module.MetricKind.Cos, quantization: module.ScalarKind.F32, connectivity: 0, expansion_add: 0, expansion_search: 0, multi: false });
    return { module };
  } catch (error) {
    return { error: error instanceof Error ? error.message.split('\n')[0] ?? String(error) : String(error) };
  }
}

/** HNSW parameters (usearch's names). */
export interface HnswOptions {
  /**
   * Graph degree (M): more links, better recall, larger file. At 100K hashed vectors of the bench
   * corpus, recall@10 against exact search at ef 1024 was 0.92 with M 16 / efConstruction 128,
   * 0.95 with 16 / 256, 0.966 with 24 / 256 (build 31 s on two threads, search p50 4.2 ms) and 0.97
   * with 32 / 256 — but usearch 2.25 corrupted its heap (`malloc(): invalid size`) in
   * test/store/ann-index.test.ts with M 32, every run; 24 passes.
   * @default 24
   */
  connectivity?: number;
  /**
   * Candidate list size while inserting (efConstruction).
   * @default 256
   */
  expansionAdd?: number;
  /**
   * Candidate list size while searching (ef); a search for `k` uses max(k, this). Short queries
   * sit far from the documents they match, where HNSW needs a wide beam: on hashed vectors of the
   * bench corpus's queries recall@10 was 0.67 at 64 and 0.95 at 512 (20K vectors); at 100K with
   * M 24 it is 0.966 at 1024 and 0.980 at 1536 (p50 4.2 / 5.9 ms).
   * @default 1024
   */
  expansionSearch?: number;
  /**
   * Threads for adding rows to the graph: a build from the table and the delta's folds
   * ({@link HnswVectorIndex.addBatch}; 0 = as many as cores). Searches always use the calling
   * thread. One, because usearch's concurrent `add` strands rows: a row whose links to lower levels are
   * not written yet can be taken as another inserter's entry point, which then links to it alone
   * and is later pruned away — stored, yet reached by no search (unum-cloud/USearch#735, open in
   * 2.25). Measured on clustered vectors (own vector as the query, top 1): 9 of 15,000 rows
   * (5,000-row builds) and 4 of 20,000 unreachable built on all cores, none on one thread; the
   * build took ×1.6 the wall time on 2 cores (2.9 → 4.8 s for 20,000 rows of 64 dimensions).
   * Builds run in the background (vector-builder.ts) while exact search answers. Folds use the
   * same count: an index cannot add on more threads than it was reserved for ("Reserve capacity
   * ahead of insertions!"), and a fold of 256 rows into a 20,000-row graph took 74 ms on one
   * thread against 89 on two under load (none of 5,120 folded rows unreachable either way).
   * @default 1
   */
  buildThreads?: number;
}

const DEFAULTS: Required<HnswOptions> = { connectivity: 24, expansionAdd: 256, expansionSearch: 1024, buildThreads: 1 };

/** Rows per native `add` call when building in bulk. */
const ADD_BATCH = 8_192;

/**
 * Rows a mutable index keeps in its exact delta before adding them to the graph in one batch. An
 * exact scan of 256 rows is ~0.1 ms at 384 dimensions; the write that reaches the count pays the
 * batch (256 graph inserts, on all cores), the ones before it none.
 */
export const FOLD_AT = 256;

export class HnswVectorIndex implements VectorIndex {
  readonly dimension: number;
  private readonly native: Usearch.Index;
  private mutable: boolean;
  /** Rows written after a mapped file was saved (only while immutable). */
  private delta: ExactVectorIndex;
  /** Keys whose copy in the mapped file is stale or removed (only while immutable). */
  private shadowed = new Set<number>();
  private readonly settings: Required<HnswOptions>;

  private constructor(private readonly usearch: UsearchModule, dimension: number, options: HnswOptions, native?: Usearch.Index) {
    this.dimension = dimension;
    this.settings = { ...DEFAULTS, ...options };
    this.native = native ?? this.fresh();
    this.mutable = true;
    this.delta = new ExactVectorIndex(dimension, 16);
  }

  /** An empty, mutable index. */
  static create(usearch: UsearchModule, dimension: number, options: HnswOptions = {}): HnswVectorIndex {
    return new HnswVectorIndex(usearch, dimension, options);
  }

  /** Read a saved index into memory (mutable). Throws when the file is not a valid index of `dimension`. */
  static load(usearch: UsearchModule, path: string, dimension: number, options: HnswOptions = {}): HnswVectorIndex {
    checkIndexFile(path, dimension);
    const index = new HnswVectorIndex(usearch, dimension, options);
    index.native.load(path);
    return index;
  }

  /** Memory-map a saved index (immutable; later writes go to the delta). */
  static view(usearch: UsearchModule, path: string, dimension: number, options: HnswOptions = {}): HnswVectorIndex {
    checkIndexFile(path, dimension);
    const index = new HnswVectorIndex(usearch, dimension, options);
    index.native.view(path);
    index.mutable = false;
    return index;
  }

  private fresh(): Usearch.Index {
    const { Index, MetricKind, ScalarKind } = this.usearch;
    return new Index({
      dimensions: this.dimension,
      metric: MetricKind.Cos,
      quantization: ScalarKind.F32,
      connectivity: this.settings.connectivity,
      expansion_add: this.settings.expansionAdd,
      expansion_search: this.settings.expansionSearch,
      multi: false,
    });
  }

  /** True while the index maps a file and buffers writes in the delta. */
  get mapped(): boolean {
    return !this.mutable;
  }

  /** Rows in the exact delta: written after a mapped file was saved, or not yet folded into the graph. */
  get pending(): number {
    return this.delta.size;
  }

  get size(): number {
    return this.native.size() - (this.mutable ? 0 : this.shadowed.size) + this.pending;
  }

  upsert(key: number, vector: Float32Array): void {
    if (vector.length !== this.dimension) {
      throw new RangeError(`vector has ${vector.length} dimensions, index has ${this.dimension}`);
    }
    const big = BigInt(key);
    if (!this.mutable) {
      if (!this.shadowed.has(key) && this.native.contains(big)) this.shadowed.add(key);
      this.delta.upsert(key, vector);
      return;
    }
    // usearch refuses duplicate keys: replacing a vector is remove + add (at the next fold).
    if (this.native.contains(big)) this.native.remove(big);
    this.delta.upsert(key, vector);
    if (this.delta.size >= FOLD_AT) this.fold();
  }

  /** Add the delta's rows to the graph (a mutable index; a mapped one folds by {@link materialize}). */
  fold(): void {
    if (!this.mutable || this.delta.size === 0) return;
    // Each delta key's graph copy was removed when it was written, so all are new to the graph.
    const keys: number[] = [];
    const matrix = new Float32Array(this.delta.size * this.dimension);
    for (const { key, vector } of this.delta.entries()) {
      matrix.set(vector, keys.length * this.dimension);
      keys.push(key);
    }
    this.delta = new ExactVectorIndex(this.dimension, 16);
    this.addBatch(keys, matrix);
  }

  /**
   * Add many rows at once (rowids and a contiguous matrix), on `buildThreads`. Keys must not be in
   * the index yet; used to build from the table.
   */
  addBatch(keys: readonly number[], matrix: Float32Array): void {
    if (!this.mutable) throw new Error('addBatch on a mapped index');
    for (let start = 0; start < keys.length; start += ADD_BATCH) {
      const end = Math.min(keys.length, start + ADD_BATCH);
      const batchKeys = BigUint64Array.from(keys.slice(start, end), (k) => BigInt(k));
      this.native.add(batchKeys, matrix.subarray(start * this.dimension, end * this.dimension), this.settings.buildThreads);
    }
  }

  remove(key: number): void {
    const big = BigInt(key);
    if (!this.mutable) {
      if (!this.shadowed.has(key) && this.native.contains(big)) this.shadowed.add(key);
      this.delta.remove(key);
      return;
    }
    if (this.native.contains(big)) this.native.remove(big);
    this.delta.remove(key);
  }

  search(query: Float32Array, k: number, accept?: (key: number) => boolean): VectorHit[] {
    if (k <= 0) return [];
    const total = this.native.size();
    const hits: VectorHit[] = [];
    if (total > 0) {
      // Shadowed and rejected keys are dropped after the native search: ask for more, then widen.
      const first = !this.mutable && this.shadowed.size > 0 ? k * 2 : k;
      for (let fetch = Math.min(total, first); ; fetch = Math.min(total, fetch * 4)) {
        hits.length = 0;
        const found = this.native.search(query, fetch, 1);
        for (let i = 0; i < found.keys.length && hits.length < k; i++) {
          const key = Number(found.keys[i]);
          if (!this.mutable && this.shadowed.has(key)) continue;
          if (accept && !accept(key)) continue;
          const distance = found.distances[i] as number;
          hits.push({ key, score: Number.isFinite(distance) ? 1 - distance : 0 });
        }
        if (hits.length >= k || fetch >= total || found.keys.length < fetch) break;
      }
    }
    if (this.delta.size === 0) return hits;
    const merged = hits.concat(this.delta.search(query, k, accept));
    merged.sort((a, b) => b.score - a.score);
    return merged.slice(0, k);
  }

  /**
   * Make a mapped index mutable: read `path` (the file it maps) into memory and apply the delta.
   * No-op for an index that is already mutable.
   */
  materialize(path: string): void {
    if (this.mutable) return;
    checkIndexFile(path, this.dimension);
    this.native.load(path);
    this.mutable = true;
    for (const key of this.shadowed) {
      const big = BigInt(key);
      if (this.native.contains(big)) this.native.remove(big);
    }
    this.shadowed.clear();
    // Shadowed keys were removed above, so the delta's keys are all new to the native index.
    this.fold();
  }

  /** Write the index to `path`, pending rows folded in first (mutable indexes only; materialize a mapped one first). */
  save(path: string): void {
    if (!this.mutable) throw new Error('save on a mapped index: materialize it first');
    this.fold();
    this.native.save(path);
  }
}

/**
 * Refuse files usearch would misread: a saved index starts with the vectors matrix
 * (u32 rows, u32 bytes per row, rows × bytes), followed by the `usearch` magic. A truncated or
 * overwritten file can crash the native loader, so this check runs before every load or view.
 */
export function checkIndexFile(path: string, dimension: number): { rows: number; bytes: number } {
  const bytes = statSync(path).size;
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(8);
    if (readSync(fd, head, 0, 8, 0) !== 8) throw new Error(`${path}: too short for a vector index`);
    const rows = head.readUInt32LE(0);
    const rowBytes = head.readUInt32LE(4);
    if (rowBytes !== dimension * 4) throw new Error(`${path}: rows of ${rowBytes} bytes, expected ${dimension * 4}`);
    const magicAt = 8 + rows * rowBytes;
    const magic = Buffer.alloc(7);
    if (magicAt + 7 > bytes || readSync(fd, magic, 0, 7, magicAt) !== 7 || magic.toString('latin1') !== 'usearch') {
      throw new Error(`${path}: not a complete vector index (truncated or overwritten)`);
    }
    return { rows, bytes };
  } finally {
    closeSync(fd);
  }
}
