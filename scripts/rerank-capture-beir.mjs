#!/usr/bin/env node
/**
 * The BEIR side of the reranker study (issue #18): each judged SciFact / CoSQA query's hits through
 * the product, as `cairn bench beir` ranks them (`cairn.recall`, k 100, hybrid with
 * `onnx:all-minilm-l6-v2-q`, vectors from the bench's embedding cache under `--cache`). Writes per
 * query its half (bench/src/suites/halves.ts), judgements, and the hits (document ids, the text the
 * product embeds); `scripts/rerank-maxsim.mjs` reranks the first of them. Also prints the metric
 * of the product's default rerank (src/recall/rerank.ts; `rerank: false` for the plain order) on both halves.
 *
 *   npm run build && nice -n 10 node scripts/rerank-capture-beir.mjs --data ../shared/data --set scifact --out /tmp/rerank/scifact.json [--cache /tmp/rerank/bench-cache]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { rankingMetrics, reindex } from '../dist/testing.js';
import { embeddingText } from '../dist/embed/embedding-text.js';
import { benchCairn, benchEmbedder, bulkRemember, freshStore, loadBeir } from '../bench/dist/suites/beir.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    set: { type: 'string', default: 'scifact' },
    cache: { type: 'string', default: '/tmp/rerank/bench-cache' },
    out: { type: 'string' },
  },
});
const log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const set = loadBeir(join(args.data, 'beir', args.set), args.set);
if (!set) throw new Error(`no BEIR set ${args.set} under ${args.data}/beir`);
const project = `beir-${args.set}`;
const work = await freshStore(args.cache, `rerank-${args.set}`);
const bm25 = benchCairn(work.store, null);
const loaded = await bulkRemember(bm25, set.corpus.map((d) => ({ key: d.id, text: d.text, project, meta: { docId: d.id, dataset: set.name } })));
log(`${loaded.written} memories; ${set.queries.length} queries`);
const embedder = await benchEmbedder(args.cache, 'onnx:all-minilm-l6-v2-q');
let t0 = performance.now();
await reindex(work.store, embedder, { batchSize: 256 });
log(`vectors in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
const cairn = benchCairn(work.store, embedder);
const queries = [];
const sums = { plain: { tuning: [0, 0], report: [0, 0] }, rerank: { tuning: [0, 0], report: [0, 0] } };
const metric = (ids, q) => {
  const m = rankingMetrics(ids.filter((id) => id !== q.id), set.qrels.get(q.id) ?? new Map());
  return args.set === 'cosqa' ? m.mrrAt10 : m.ndcgAt10;
};
t0 = performance.now();
for (const q of set.queries) {
  // Recall's own order (the rerank off), the candidates a reranker reorders.
  const hits = (await cairn.recall({ query: q.text, k: 100, project, touch: false, checkFiles: false, rerank: false })).hits;
  // The product's default rerank (stored token signatures, src/recall/rerank.ts) on the same call.
  const reranked = (await cairn.recall({ query: q.text, k: 100, project, touch: false, checkFiles: false })).hits;
  const half = set.halves.get(q.id) ?? 'report';
  for (const [mode, list] of [['plain', hits], ['rerank', reranked]]) {
    sums[mode][half][0] += metric(list.flatMap((h) => loaded.keysOf.get(h.memory.id) ?? []), q);
    sums[mode][half][1]++;
  }
  queries.push({
    id: q.id,
    question: q.text,
    half: set.halves.get(q.id) ?? 'report',
    qrels: Object.fromEntries(set.qrels.get(q.id) ?? new Map()),
    hits: hits.map((h) => ({ docs: (loaded.keysOf.get(h.memory.id) ?? []).filter((id) => id !== q.id), text: embeddingText(h.memory), score: h.score })),
  });
}
log(`captured ${queries.length} queries in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
for (const [mode, halves] of Object.entries(sums)) {
  const all = (halves.tuning[0] + halves.report[0]) / (halves.tuning[1] + halves.report[1]);
  log(`${args.set} ${args.set === 'cosqa' ? 'MRR@10' : 'nDCG@10'} ${mode === 'plain' ? 'cairn.recall' : 'cairn.recall rerank'}: tuning ${(halves.tuning[0] / halves.tuning[1]).toFixed(4)} report ${(halves.report[0] / halves.report[1]).toFixed(4)} all ${all.toFixed(4)}`);
}
if (args.out) writeFileSync(args.out, JSON.stringify({ kind: 'beir', set: args.set, model: embedder.model, queries }));
await embedder.close?.();
await work.dispose();
