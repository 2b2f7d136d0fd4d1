import { rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOLD_AT, HnswVectorIndex, checkIndexFile, loadUsearch, type UsearchModule } from '../../src/store/ann-index.js';
import { ExactVectorIndex } from '../../src/store/vector-index.js';
import { tempDir } from '../helpers/cli.js';
import { clusteredVectors } from './vectors-fixture.js';

const dir = tempDir('cairn-ann-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let usearch: UsearchModule;
beforeAll(async () => {
  const loaded = await loadUsearch();
  if ('error' in loaded) throw new Error(`usearch does not load here: ${loaded.error}`);
  usearch = loaded.module;
});

const DIM = 64;
const N = 5_000;

function recallAt10(ann: HnswVectorIndex, exact: ExactVectorIndex, queries: Float32Array[]): number {
  let found = 0;
  for (const q of queries) {
    const truth = new Set(exact.search(q, 10).map((h) => h.key));
    found += ann.search(q, 10).filter((h) => truth.has(h.key)).length;
  }
  return found / (queries.length * 10);
}

describe('HnswVectorIndex', { timeout: 60_000 }, () => {
  const { vectors, queries } = clusteredVectors({ seed: 7, count: N, dimension: DIM, clusters: 50, queries: 100 });

  it('finds ≥ 95% of the exact top 10 on clustered vectors', () => {
    const ann = HnswVectorIndex.create(usearch, DIM);
    const exact = new ExactVectorIndex(DIM);
    ann.addBatch(
      vectors.map((_, i) => i + 1),
      concat(vectors, DIM),
    );
    vectors.forEach((v, i) => exact.upsert(i + 1, v));
    expect(ann.size).toBe(N);
    expect(recallAt10(ann, exact, queries)).toBeGreaterThanOrEqual(0.95);
    // A row's own vector finds it first, scored as the exact index scores it (cosine similarity).
    // Counted over many rows: HNSW need not reach every row (the next test holds builds to none).
    const firsts = vectors.slice(0, 100).map((v) => ann.search(v, 1)[0]);
    expect(firsts.filter((hit, i) => hit?.key === i + 1).length).toBeGreaterThanOrEqual(95);
    for (const [i, hit] of firsts.entries()) if (hit?.key === i + 1) expect(hit.score).toBeCloseTo(1, 4);
  });

  it('leaves no row of a build unreachable: each row’s own vector finds it first', () => {
    // usearch's concurrent add strands a few rows (unum-cloud/USearch#735): built on all cores,
    // 5,000-row builds of this kind left ~3 rows unreachable; builds run on one thread.
    const ann = HnswVectorIndex.create(usearch, DIM);
    ann.addBatch(
      vectors.map((_, i) => i + 1),
      concat(vectors, DIM),
    );
    const unreachable = vectors.map((v, i) => (ann.search(v, 1)[0]?.key === i + 1 ? -1 : i + 1)).filter((key) => key > 0);
    expect(unreachable).toEqual([]);
  });

  it('replaces a key on upsert, drops it on remove, and honours accept', () => {
    const ann = HnswVectorIndex.create(usearch, DIM);
    vectors.slice(0, 500).forEach((v, i) => ann.upsert(i + 1, v));
    const target = vectors[1000] as Float32Array;
    ann.upsert(7, target);
    expect(ann.size).toBe(500);
    expect(ann.search(target, 1)[0]?.key).toBe(7);
    expect(ann.search(vectors[6] as Float32Array, 5).map((h) => h.key)).not.toContain(7);
    ann.remove(7);
    expect(ann.size).toBe(499);
    expect(ann.search(target, 20).map((h) => h.key)).not.toContain(7);
    const even = ann.search(target, 10, (key) => key % 2 === 0);
    expect(even).toHaveLength(10);
    expect(even.every((h) => h.key % 2 === 0)).toBe(true);
  });

  it('maps a saved file, keeps later writes beside it, and materializes to the same answers', () => {
    const path = join(dir, 'mapped.usearch');
    const built = HnswVectorIndex.create(usearch, DIM);
    built.addBatch(
      vectors.slice(0, 2000).map((_, i) => i + 1),
      concat(vectors.slice(0, 2000), DIM),
    );
    built.save(path);
    const mapped = HnswVectorIndex.view(usearch, path, DIM);
    expect(mapped.mapped).toBe(true);
    expect(mapped.size).toBe(2000);
    const moved = vectors[3000] as Float32Array;
    mapped.upsert(5, moved); // replaces key 5's mapped copy
    mapped.upsert(2001, vectors[3001] as Float32Array); // new key
    mapped.remove(9);
    expect(mapped.pending).toBe(2);
    expect(mapped.size).toBe(2000);
    expect(mapped.search(moved, 1)[0]?.key).toBe(5);
    expect(mapped.search(vectors[4] as Float32Array, 10).map((h) => h.key)).not.toContain(5);
    expect(mapped.search(vectors[8] as Float32Array, 10).map((h) => h.key)).not.toContain(9);
    const before = queries.slice(0, 20).map((q) => mapped.search(q, 10).map((h) => h.key));
    mapped.materialize(path);
    expect(mapped.mapped).toBe(false);
    expect(mapped.size).toBe(2000);
    expect(mapped.search(moved, 1)[0]?.key).toBe(5);
    const after = queries.slice(0, 20).map((q) => mapped.search(q, 10).map((h) => h.key));
    let same = 0;
    before.forEach((keys, i) => (same += keys.filter((k) => after[i]?.includes(k)).length));
    expect(same / 200).toBeGreaterThanOrEqual(0.95);
  });

  it('keeps written rows in the exact delta until FOLD_AT of them, finds them meanwhile, and saves them folded', () => {
    const ann = HnswVectorIndex.create(usearch, DIM);
    ann.addBatch(
      vectors.slice(0, 2000).map((_, i) => i + 1),
      concat(vectors.slice(0, 2000), DIM),
    );
    const exact = new ExactVectorIndex(DIM);
    vectors.slice(0, 2000).forEach((v, i) => exact.upsert(i + 1, v));
    // Rows written one by one wait beside the graph: each is found by an exact scan.
    for (let i = 2000; i < 2000 + FOLD_AT - 2; i++) {
      ann.upsert(i + 1, vectors[i] as Float32Array);
      exact.upsert(i + 1, vectors[i] as Float32Array);
    }
    ann.upsert(3, vectors[4000] as Float32Array); // replaces a graph row
    exact.upsert(3, vectors[4000] as Float32Array);
    ann.remove(2001); // and a pending one goes
    exact.remove(2001);
    expect(ann.pending).toBe(FOLD_AT - 2);
    expect(ann.size).toBe(exact.size);
    for (let i = 2001; i < 2000 + FOLD_AT - 2; i++) expect(ann.search(vectors[i] as Float32Array, 1)[0]).toEqual({ key: i + 1, score: expect.closeTo(1, 4) });
    expect(ann.search(vectors[4000] as Float32Array, 1)[0]?.key).toBe(3);
    expect(ann.search(vectors[2] as Float32Array, 10).map((h) => h.key)).not.toContain(3);
    expect(ann.search(vectors[2000] as Float32Array, 10).map((h) => h.key)).not.toContain(2001);
    expect(recallAt10(ann, exact, queries)).toBeGreaterThanOrEqual(0.95);
    // The write that reaches the count adds them all to the graph.
    ann.upsert(4999, vectors[4003] as Float32Array);
    exact.upsert(4999, vectors[4003] as Float32Array);
    expect(ann.pending).toBe(FOLD_AT - 1);
    ann.upsert(5000, vectors[4001] as Float32Array);
    exact.upsert(5000, vectors[4001] as Float32Array);
    expect(ann.pending).toBe(0);
    expect(ann.size).toBe(exact.size);
    expect(ann.search(vectors[2100] as Float32Array, 1)[0]?.key).toBe(2101);
    expect(ann.search(vectors[4000] as Float32Array, 1)[0]?.key).toBe(3);
    expect(recallAt10(ann, exact, queries)).toBeGreaterThanOrEqual(0.95);
    // A save folds what is pending first: the file holds every row.
    ann.upsert(5001, vectors[4002] as Float32Array);
    expect(ann.pending).toBe(1);
    const path = join(dir, 'folded.usearch');
    ann.save(path);
    expect(ann.pending).toBe(0);
    const loaded = HnswVectorIndex.load(usearch, path, DIM);
    expect(loaded.size).toBe(exact.size + 1);
    expect(loaded.search(vectors[4002] as Float32Array, 1)[0]?.key).toBe(5001);
    expect(loaded.search(vectors[2100] as Float32Array, 1)[0]?.key).toBe(2101);
  });

  it('refuses truncated and overwritten files before the native loader sees them', () => {
    const path = join(dir, 'good.usearch');
    const index = HnswVectorIndex.create(usearch, DIM);
    vectors.slice(0, 100).forEach((v, i) => index.upsert(i + 1, v));
    index.save(path);
    expect(checkIndexFile(path, DIM).bytes).toBeGreaterThan(100 * DIM * 4);
    expect(() => checkIndexFile(path, DIM * 2)).toThrow(/bytes/);
    const bytes = readFileSync(path);
    const truncated = join(dir, 'truncated.usearch');
    writeFileSync(truncated, bytes.subarray(0, bytes.length >> 1));
    expect(() => HnswVectorIndex.load(usearch, truncated, DIM)).toThrow(/truncated/);
    const garbage = join(dir, 'garbage.usearch');
    writeFileSync(garbage, Buffer.alloc(bytes.length, 7));
    expect(() => HnswVectorIndex.view(usearch, garbage, DIM)).toThrow();
    writeFileSync(garbage, Buffer.alloc(3));
    expect(() => HnswVectorIndex.load(usearch, garbage, DIM)).toThrow(/too short/);
  });
});

function concat(vectors: Float32Array[], dimension: number): Float32Array {
  const out = new Float32Array(vectors.length * dimension);
  vectors.forEach((v, i) => out.set(v, i * dimension));
  return out;
}
