#!/usr/bin/env node
// HNSW search beam (ef) against exact search on a cached `cairn bench` corpus: builds the HNSW index
// from the corpus's stored vectors once with the store's build settings (cached in the work
// directory), embeds the manifest's known-answer queries once with the default embedder (cached),
// then for each ef measures, per query (each measured `--repeat` times, quality from the first):
//  - recall@10 of the unfiltered top 10 against brute force over every stored vector;
//  - the store's real search (`searchFiltered`: top 50 within the query's project, fetch 200, ×4
//    until 50 pass): overlap of its top 10 / 50 with the exact filtered top 10 / 50, how many
//    queries fetched wider, and the latency of the native searches plus the filter (in JS here, SQL
//    in the store).
//
//   nice -n 10 node scripts/ann-curve.mjs <corpus.db> <manifest.json> [--ef 64,128,256,512,1024] [--work DIR] [--queries N]
//     [--baseline <other build>/dist/store/filtered-search.js]
//
// Nothing is written beside the corpus; the corpus is opened read-only.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { createEmbedder, DEFAULT_EMBEDDER_SPEC, HnswVectorIndex, loadUsearch } from '../dist/testing.js';
import { searchFiltered } from '../dist/store/filtered-search.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { baseline: { type: 'string' }, ef: { type: 'string', default: '64,128,256,512,1024' }, work: { type: 'string' }, queries: { type: 'string' }, repeat: { type: 'string', default: '2' } },
});
const [dbPath, manifestPath] = positionals;
if (!dbPath || !manifestPath) {
  console.error('usage: node scripts/ann-curve.mjs <corpus.db> <manifest.json> [--ef 64,128,256,512,1024] [--work DIR] [--queries N]');
  process.exit(2);
}
const efs = values.ef.split(',').map(Number);
const key = createHash('sha256').update(resolve(dbPath)).digest('hex').slice(0, 12);
const work = values.work ?? join(tmpdir(), `cairn-ann-curve-${key}`);
mkdirSync(work, { recursive: true });
const LIMIT = 50;

const db = new Database(dbPath, { readonly: true, fileMustExist: true });
const rows = db.prepare('SELECT v.memory_rowid AS rowid, v.vector AS vector, m.project AS project, (m.valid_to IS NULL AND m.deleted_at IS NULL) AS live FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid ORDER BY v.memory_rowid').all();
db.close();
const dim = rows[0].vector.byteLength / 4;
const n = rows.length;
const matrix = new Float32Array(n * dim);
const keys = new Array(n);
const meta = new Map();
rows.forEach((row, i) => {
  new Uint8Array(matrix.buffer, i * dim * 4, dim * 4).set(row.vector);
  keys[i] = row.rowid;
  meta.set(row.rowid, { project: row.project, live: row.live === 1 });
});
rows.length = 0;
const norms = new Float32Array(n);
for (let i = 0; i < n; i++) {
  let s = 0;
  for (let d = 0; d < dim; d++) s += matrix[i * dim + d] ** 2;
  norms[i] = Math.sqrt(s) || 1;
}
console.log(`${n.toLocaleString('en-US')} vectors of ${dim} dimensions`);

const usearch = await loadUsearch();
if (!('module' in usearch)) throw new Error(`usearch: ${usearch.error}`);
const indexPath = join(work, 'index.usearch');
if (!existsSync(indexPath)) {
  const started = performance.now();
  const built = HnswVectorIndex.create(usearch.module, dim);
  built.addBatch(keys, matrix);
  built.save(indexPath);
  console.log(`HNSW built with the store's defaults in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

let queries = JSON.parse(readFileSync(manifestPath, 'utf8')).queries;
if (values.queries) queries = queries.slice(0, Number(values.queries));
const vectorsPath = join(work, `queries-${queries.length}.f32`);
let queryMatrix;
if (existsSync(vectorsPath)) queryMatrix = new Float32Array(readFileSync(vectorsPath).buffer.slice(0));
else {
  const embedder = await createEmbedder(DEFAULT_EMBEDDER_SPEC);
  queryMatrix = new Float32Array(queries.length * dim);
  for (let i = 0; i < queries.length; i++) queryMatrix.set((await embedder.embed([queries[i].text], { purpose: 'query' }))[0], i * dim);
  await embedder.close?.();
  writeFileSync(vectorsPath, Buffer.from(queryMatrix.buffer));
}
const queryVector = (i) => queryMatrix.subarray(i * dim, (i + 1) * dim);
const accepts = (q) => (key) => {
  const m = meta.get(key);
  return m.live && (m.project === q.project || m.project === null);
};

// Exact: every stored vector's cosine with the query.
const exactPath = join(work, `exact-${queries.length}.json`);
let exact;
if (existsSync(exactPath)) exact = JSON.parse(readFileSync(exactPath, 'utf8'));
else {
  const started = performance.now();
  exact = queries.map((q, qi) => {
    const v = queryVector(qi);
    let qn = 0;
    for (let d = 0; d < dim; d++) qn += v[d] ** 2;
    qn = Math.sqrt(qn) || 1;
    const scores = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let s = 0;
      const o = i * dim;
      for (let d = 0; d < dim; d++) s += matrix[o + d] * v[d];
      scores[i] = s / (norms[i] * qn);
    }
    const order = Array.from(scores.keys()).sort((a, b) => scores[b] - scores[a]);
    const accept = accepts(q);
    const filtered = [];
    for (const i of order) {
      if (accept(keys[i])) filtered.push(keys[i]);
      if (filtered.length >= LIMIT) break;
    }
    return { top10: order.slice(0, 10).map((i) => keys[i]), filtered };
  });
  writeFileSync(exactPath, JSON.stringify(exact));
  console.log(`exact search of ${queries.length} queries in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const overlap = (got, want, k) => {
  const w = new Set(want.slice(0, k));
  return got.slice(0, k).filter((x) => w.has(x)).length / Math.max(1, Math.min(k, w.size));
};
// The store's filtered search (src/store/filtered-search.ts), the filter judged in JS here (SQL in
// the store): `store` is this build's, `baseline` another build's (--baseline
// <dist/store/filtered-search.js>), e.g. to compare a change of the fetch sizes on the same index.
const baseline = values.baseline ? (await import(resolve(values.baseline))).searchFiltered : null;
const filteredSearch = async (index, v, accept, search) => {
  let fetches = 0;
  const out = await search({
    limit: LIMIT,
    size: index.size,
    nearest: (fetch) => {
      fetches++;
      return index.search(v, fetch);
    },
    accept: (keys) => new Map(keys.filter(accept).map((k) => [k, String(k)])),
    acceptChunk: 64,
  });
  return { out: out.map((h) => Number(h.id)), fetches };
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

console.log(`${queries.length} queries, project filter (its project or none) + live rows, ${LIMIT} candidates`);
console.log('ef | recall@10 unfiltered | search k=10 p50 ms | strategy | filtered top10 / top50 vs exact | fetched wider | filtered search p50 / p95 ms');
const repeat = Number(values.repeat);
for (const ef of efs) {
  const index = HnswVectorIndex.view(usearch.module, indexPath, dim, { expansionSearch: ef });
  const r10 = [];
  const t10 = [];
  const strategies = { ...(baseline ? { baseline } : {}), store: searchFiltered };
  const stats = Object.fromEntries(Object.keys(strategies).map((k) => [k, { f10: [], f50: [], wider: 0, t: [] }]));
  for (let round = 0; round < repeat; round++) {
    for (const [qi, q] of queries.entries()) {
      const v = queryVector(qi);
      let started = performance.now();
      const hits = index.search(v, 10);
      t10.push(performance.now() - started);
      if (round === 0) r10.push(overlap(hits.map((h) => h.key), exact[qi].top10, 10));
      for (const [name, search] of Object.entries(strategies)) {
        const s = stats[name];
        started = performance.now();
        const { out, fetches } = await filteredSearch(index, v, accepts(q), search);
        s.t.push(performance.now() - started);
        if (round > 0) continue;
        s.f10.push(overlap(out, exact[qi].filtered, 10));
        s.f50.push(overlap(out, exact[qi].filtered, 50));
        if (fetches > 1) s.wider++;
      }
    }
  }
  for (const [name, s] of Object.entries(stats)) {
    console.log(
      `${ef} | ${mean(r10).toFixed(4)} | ${median(t10).toFixed(2)} | ${name} | ${mean(s.f10).toFixed(4)} / ${mean(s.f50).toFixed(4)} | ${((100 * s.wider) / queries.length).toFixed(0)}% | ${median(s.t).toFixed(2)} / ${p95(s.t).toFixed(2)}`,
    );
  }
}
