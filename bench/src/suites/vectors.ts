/**
 * `vectors`: the SQLite store's vector search at each corpus size, exact (brute force) and HNSW
 * (usearch) side by side on the same database and queries: HNSW recall@10 against exact search,
 * search latency through `store.searchVector` (project filter, 50 candidates, as recall asks),
 * the HNSW build time, and how long a fresh process takes to open each index and answer its
 * first query (what a hook pays). A brute-force sweep over the first N vectors shows where exact
 * search stops meeting 5 ms, which is where the store switches to HNSW.
 *
 * Vectors come from the feature-hashing embedder (256 dimensions) over the corpus texts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { HnswVectorIndex, type SqliteVectorIndexOptions, type UsearchModule, createHashEmbedder, loadUsearch } from 'cairn-memory/testing';
import { type EmbedderIdentity, ExactVectorIndex, type SqliteStore, openSqliteStore } from 'cairn-memory';
import { PACKAGE_ROOT } from '../env.js';
import { datasetOf, ensureCorpusDb, workingCopy } from '../dataset.js';
import { atLeast, metric, sizedSuite, sizeLabel } from '../metrics.js';
import { summarize, timeEach } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite } from '../types.js';

const DIMENSION = 256;
const K = 10;
/** recall's candidate count per retriever. */
const CANDIDATES = 50;
/** Fresh-process opens per mode (the median is reported). */
const OPENS = 5;
const SWEEP = [5_000, 10_000, 20_000, 50_000, 100_000, 200_000];
const EXPANSIONS = [64, 128, 256, 512];

interface Query {
  vector: Float32Array;
  project: string | null;
}

/** A child process that opens the store, runs one vector search and prints its timings. */
const CHILD = `
const [storeUrl, path, options, model, query] = process.argv.slice(1);
const started = performance.now();
const { openSqliteStore } = await import(storeUrl);
const store = await openSqliteStore(path, { vectorIndex: JSON.parse(options) });
const opened = performance.now();
const hits = await store.searchVector(Float32Array.from(JSON.parse(query)), JSON.parse(model), { limit: 50 });
const searched = performance.now();
const again = await store.searchVector(Float32Array.from(JSON.parse(query)).reverse(), JSON.parse(model), { limit: 50 });
const second = performance.now();
await store.close();
console.log(JSON.stringify({ openMs: opened - started, firstSearchMs: searched - opened, secondSearchMs: second - searched, hits: hits.length + again.length }));
`;

function freshProcess(path: string, options: SqliteVectorIndexOptions, model: EmbedderIdentity, query: Float32Array): { firstSearchMs: number; secondSearchMs: number } {
  const storeUrl = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'index.js')).href; // cairn's public API, built
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, storeUrl, path, JSON.stringify(options), JSON.stringify(model), JSON.stringify(Array.from(query))], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`fresh-process search failed: ${run.stderr}`);
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as { firstSearchMs: number; secondSearchMs: number; hits: number };
  if (result.hits === 0) throw new Error('fresh-process search found nothing');
  return result;
}

function median(values: number[]): number {
  return summarize(values).p50;
}

async function runSize(ctx: BenchContext, size: number, datasets: Dataset[], metrics: Metric[]): Promise<Record<string, unknown>> {
  const embedder = createHashEmbedder({ dimension: DIMENSION });
  const model: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
  const corpus = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size, embedder }, ctx.log);
  datasets.push(datasetOf(corpus));
  const label = `@${sizeLabel(size)}`;
  // Exact search over 1M vectors takes ~0.3 s a query in JS: fewer queries there.
  const known = corpus.manifest.queries.slice(0, ctx.quick ? 100 : size >= 1_000_000 ? 200 : 1000);
  const vectors = await embedder.embed(known.map((q) => q.text));
  const queries: Query[] = known.map((q, i) => ({ vector: vectors[i] as Float32Array, project: q.project }));
  const warmup = queries.slice(0, 20);
  ctx.log(`vectors ${label}: ${queries.length} queries, ${DIMENSION}-dimension hash vectors`);

  const copy = workingCopy(corpus, join(ctx.cacheDir, 'work'));
  const stores: SqliteStore[] = [];
  try {
    const exact = await openSqliteStore(copy.path, { vectorIndex: { annThreshold: Infinity } });
    stores.push(exact);
    let started = process.hrtime.bigint();
    await exact.searchVector(queries[0]?.vector as Float32Array, model, { limit: K });
    const exactLoadMs = Number(process.hrtime.bigint() - started) / 1e6;

    const hnsw = await openSqliteStore(copy.path, { vectorIndex: { annThreshold: 1, build: 'inline' } });
    stores.push(hnsw);
    started = process.hrtime.bigint();
    await hnsw.searchVector(queries[0]?.vector as Float32Array, model, { limit: K });
    const buildMs = Number(process.hrtime.bigint() - started) / 1e6;
    if (!hnsw.capabilities.ann) {
      const reason = await loadUsearch();
      return { skipped: `usearch unavailable: ${'error' in reason ? reason.error : 'unknown'}` };
    }
    ctx.log(`vectors ${label}: HNSW built and saved in ${(buildMs / 1000).toFixed(1)} s`);

    // Recall@10 of HNSW against exact, unfiltered.
    let found = 0;
    for (const q of queries) {
      const truth = new Set((await exact.searchVector(q.vector, model, { limit: K })).map((h) => h.id));
      found += (await hnsw.searchVector(q.vector, model, { limit: K })).filter((h) => truth.has(h.id)).length;
    }
    const recallAt10 = found / (queries.length * K);

    const search = (store: SqliteStore) => (q: Query) => store.searchVector(q.vector, model, { project: q.project, limit: CANDIDATES });
    const exactLatency = summarize(await timeEach(queries, search(exact), warmup));
    const hnswLatency = summarize(await timeEach(queries, search(hnsw), warmup));
    const unfiltered = (store: SqliteStore) => (q: Query) => store.searchVector(q.vector, model, { limit: CANDIDATES });
    const exactUnfiltered = summarize(await timeEach(queries, unfiltered(exact), warmup));
    const hnswUnfiltered = summarize(await timeEach(queries, unfiltered(hnsw), warmup));

    // The index alone: truth from brute force over every row, HNSW at several expansions.
    const rows = readVectors(copy.path);
    const truthIndex = new ExactVectorIndex(DIMENSION, rows.length);
    for (const row of rows) truthIndex.upsert(row.key, row.vector);
    const raw = queries.map((q) => q.vector);
    const truth = raw.map((q) => new Set(truthIndex.search(q, K).map((h) => h.key)));
    const module = (await loadUsearch()) as { module: UsearchModule };
    const saved = JSON.parse(readFileSync(`${copy.path}.vectors.json`, 'utf8')) as { file: string; bytes: number };
    const file = join(dirname(copy.path), saved.file);
    const efSweep = expansionSweep(module.module, file, truth, raw, `${label} (query texts)`, metrics);
    // Stored memories as queries ("more like this", near-duplicates): in the documents' own distribution.
    const stride = Math.max(1, Math.floor(rows.length / raw.length));
    const asQueries = raw.map((_, i) => (rows[(i * stride + 7) % rows.length] as { vector: Float32Array }).vector);
    const asTruth = asQueries.map((q) => new Set(truthIndex.search(q, K).map((h) => h.key)));
    const efSweepMemories = expansionSweep(module.module, file, asTruth, asQueries, `${label} (memories as queries)`, metrics);
    const bruteForce = await exactSweep(rows, raw.slice(0, 200), label, metrics);

    // A fresh process: open the store and answer the first query.
    const probe = queries[1]?.vector as Float32Array;
    const opens = (options: SqliteVectorIndexOptions) => {
      const runs = Array.from({ length: ctx.quick ? 2 : OPENS }, () => freshProcess(copy.path, options, model, probe));
      return { first: median(runs.map((r) => r.firstSearchMs)), second: median(runs.map((r) => r.secondSearchMs)) };
    };
    const viewOpen = opens({ annThreshold: 1, open: 'view' });
    const loadOpen = opens({ annThreshold: 1, open: 'load' });
    // JSON has no Infinity: the largest safe integer keeps the child exact.
    const exactOpen = opens({ annThreshold: Number.MAX_SAFE_INTEGER });

    metrics.push(
      metric(`hnsw recall@${K} vs exact ${label}`, recallAt10, 'share', { target: atLeast(0.95), note: `${queries.length} queries, ${DIMENSION} dims` }),
      metric(`vector search p50 ${label} (exact)`, exactLatency.p50, 'ms', { note: `store.searchVector, project filter, ${CANDIDATES} candidates` }),
      metric(`vector search p95 ${label} (exact)`, exactLatency.p95, 'ms'),
      metric(`vector search p50 ${label} (hnsw)`, hnswLatency.p50, 'ms'),
      metric(`vector search p95 ${label} (hnsw)`, hnswLatency.p95, 'ms'),
      metric(`vector search p50 ${label} (exact, no filter)`, exactUnfiltered.p50, 'ms', { note: `${CANDIDATES} candidates` }),
      metric(`vector search p95 ${label} (exact, no filter)`, exactUnfiltered.p95, 'ms'),
      metric(`vector search p50 ${label} (hnsw, no filter)`, hnswUnfiltered.p50, 'ms'),
      metric(`vector search p95 ${label} (hnsw, no filter)`, hnswUnfiltered.p95, 'ms'),
      metric(`hnsw index file ${label}`, saved.bytes / 1e6, 'MB'),
      metric(`hnsw build + save ${label}`, buildMs, 'ms', { note: 'from the vectors table, first search in a process with no saved index' }),
      metric(`fresh process: first vector search ${label} (hnsw, mapped)`, viewOpen.first, 'ms', { note: `median of ${ctx.quick ? 2 : OPENS}; includes loading usearch` }),
      metric(`fresh process: first vector search ${label} (hnsw, loaded)`, loadOpen.first, 'ms'),
      metric(`fresh process: first vector search ${label} (exact, read from table)`, exactOpen.first, 'ms'),
    );
    return {
      queries: queries.length,
      dimension: DIMENSION,
      recallAt10,
      exact: { ...exactLatency, unfiltered: exactUnfiltered, loadMs: exactLoadMs, freshProcess: exactOpen, bruteForceP50ByVectors: bruteForce },
      hnsw: { ...hnswLatency, unfiltered: hnswUnfiltered, buildMs, fileBytes: saved.bytes, freshProcessMapped: viewOpen, freshProcessLoaded: loadOpen, byExpansion: efSweep, byExpansionMemoriesAsQueries: efSweepMemories },
    };
  } finally {
    for (const store of stores) await store.close();
    copy.dispose();
    // The saved index files live beside the working copy.
    const prefix = `${basename(copy.path)}.vectors.`;
    for (const name of readdirSync(dirname(copy.path))) if (name.startsWith(prefix)) rmSync(join(dirname(copy.path), name), { force: true });
  }
}

/** Every vector in the table, in write order. */
function readVectors(path: string): Array<{ key: number; vector: Float32Array }> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT memory_rowid AS key, vector FROM vectors ORDER BY seq').all() as Array<{ key: number; vector: Buffer }>;
    return rows.map((row) => {
      const vector = new Float32Array(row.vector.byteLength / 4);
      new Uint8Array(vector.buffer).set(row.vector);
      return { key: row.key, vector };
    });
  } finally {
    db.close();
  }
}

/** Brute-force p50 over the first N vectors (where exact search stops meeting 5 ms). */
async function exactSweep(rows: Array<{ key: number; vector: Float32Array }>, queries: Float32Array[], label: string, metrics: Metric[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const index = new ExactVectorIndex(DIMENSION, 4096);
  let next = 0;
  for (const n of SWEEP.filter((s) => s <= rows.length)) {
    while (index.size < n) {
      const row = rows[next++] as { key: number; vector: Float32Array };
      index.upsert(row.key, row.vector);
    }
    const latency = summarize(await timeEach(queries, async (q) => index.search(q, CANDIDATES * 4), queries.slice(0, 10)));
    out[sizeLabel(n)] = latency.p50;
    metrics.push(metric(`exact index p50 over the first ${sizeLabel(n)} vectors ${label}`, latency.p50, 'ms', { note: `${DIMENSION} dims, top ${CANDIDATES * 4} (the store's first fetch)` }));
  }
  return out;
}

/** Raw HNSW recall@10 and p50 at several search expansions, on the saved file (mapped once per value). */
function expansionSweep(
  module: UsearchModule,
  file: string,
  truth: Array<Set<number>>,
  queries: Float32Array[],
  label: string,
  metrics: Metric[],
): Record<string, { recallAt10: number; p50: number }> {
  const out: Record<string, { recallAt10: number; p50: number }> = {};
  for (const ef of EXPANSIONS) {
    const index = HnswVectorIndex.view(module, file, DIMENSION, { expansionSearch: ef });
    let found = 0;
    const samples: number[] = [];
    queries.forEach((q, i) => {
      const started = process.hrtime.bigint();
      const hits = index.search(q, K);
      samples.push(Number(process.hrtime.bigint() - started) / 1e6);
      found += hits.filter((h) => truth[i]?.has(h.key)).length;
    });
    const recallAt10 = found / (queries.length * K);
    const p50 = summarize(samples).p50;
    out[`ef${ef}`] = { recallAt10, p50 };
    metrics.push(metric(`hnsw index recall@${K} ${label}, ef ${ef}`, recallAt10, 'share', { note: `index only, p50 ${p50.toFixed(3)} ms` }));
  }
  return out;
}

export const vectorsSuite: Suite = sizedSuite('vectors', 'vector search exact vs HNSW (usearch): recall@10 against exact, p50/p95, build time and fresh-process open', runSize);
