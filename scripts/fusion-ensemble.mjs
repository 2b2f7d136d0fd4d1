#!/usr/bin/env node
/**
 * Offline measurement of an encoder ensemble (issue #18): MiniLM (the product's vector index) plus a
 * second shipped encoder fused as a third list in recall's rank fusion, on LoCoMo (the turn with its
 * `Memory.context`, as `cairn import` stores a conversation).
 *
 * Each question's lists are captured once through the product: `retrieve` (BM25 + MiniLM, at the
 * shipped `ENCODER_FUSION`), plus the second encoder's exact top candidates over the
 * conversation's memories (embedded from `embeddingText`, as the product would embed them). Then
 * recall's arithmetic (src/recall/recall.ts: rank fusion, composite score, coverage, neighbour
 * lending, precedence) is redone per grid point with the product's own functions. The point
 * "second weight 0" is recall itself and must reproduce the bench's figure.
 *
 *   npm run build && nice -n 10 node scripts/fusion-ensemble.mjs --data ../shared/data [--second onnx:e5-small-v2-q] [--out file.json]
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEmbedder, reindex } from '../dist/testing.js';
import { ConversationContext } from '../dist/index.js';
import { retrieve } from '../dist/recall/retrieve.js';
import { reciprocalRankFusion } from '../dist/recall/fusion.js';
import { compositeScore, precedence } from '../dist/recall/score.js';
import { neighbourLifts } from '../dist/recall/neighbours.js';
import { termCoverage, roughCoverage } from '../dist/recall/recall.js';
import { embeddingText } from '../dist/embed/embedding-text.js';
import { dot } from '../dist/embed/vector.js';
import { parseLocomo, turnProvenance } from '../bench/dist/suites/locomo.js';
import { benchCairn, bulkRemember, freshStore } from '../bench/dist/suites/beir.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    second: { type: 'string', default: 'onnx:e5-small-v2-q' },
    out: { type: 'string' },
  },
});
const K = 10;
const CANDIDATES = Math.max(50, 5 * K);
const FLOOR = 0.25;
const EXACT_FOR = Math.max(50, 3 * K);

const data = parseLocomo(JSON.parse(readFileSync(join(args.data, 'locomo', 'locomo-dev.json'), 'utf8')));
const cacheDir = mkdtempSync(join(tmpdir(), 'fusion-ensemble-'));
const work = await freshStore(cacheDir, 'locomo-reply');
const log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

// The reply layout of bench/src/suites/locomo.ts.
const conversation = new ConversationContext();
const items = data.conversations.flatMap((c) =>
  c.turns.map((t) => {
    const provenance = turnProvenance(c.id, t.diaId);
    const context = conversation.next(provenance, t.text);
    return { key: `${c.id}/${t.diaId}`, text: t.text, project: `locomo-${c.id}`, meta: { diaId: t.diaId, conversation: c.id }, provenance, ...(context !== null ? { context } : {}) };
  }),
);
const minilm = await createEmbedder('onnx:all-minilm-l6-v2-q');
const second = await createEmbedder(args.second);
const cairn = benchCairn(work.store, minilm);
const loaded = await bulkRemember(cairn, items);
log(`${loaded.written} memories; embedding with ${minilm.model}`);
let t0 = performance.now();
await reindex(work.store, minilm);
log(`minilm reindex ${((performance.now() - t0) / 1000).toFixed(0)} s; embedding with ${second.model}`);

// The second encoder's vectors, per project, from what the product embeds.
const ids = [...loaded.keysOf.keys()];
const memories = new Map((await work.store.getMemories(ids)).map((m) => [m.id, m]));
const byProject = new Map();
t0 = performance.now();
const texts = ids.map((id) => embeddingText(memories.get(id)));
const vectors = [];
for (let i = 0; i < texts.length; i += 64) {
  vectors.push(...(await second.embed(texts.slice(i, i + 64), { purpose: 'document' })));
  if (i % 1024 === 0) log(`second ${i}/${texts.length}`);
}
log(`second encoder ${((performance.now() - t0) / 1000).toFixed(0)} s`);
ids.forEach((id, i) => {
  const project = memories.get(id).project;
  if (!byProject.has(project)) byProject.set(project, []);
  byProject.get(project).push({ id, vector: vectors[i] });
});

// Capture.
const half = new Map(data.conversations.map((c, i) => [c.id, i % 2 === 0 ? 'tuning' : 'report']));
const captures = [];
t0 = performance.now();
for (const q of data.questions) {
  const project = `locomo-${q.conversation}`;
  const r = await retrieve(cairn.deps, { query: q.question, filter: { project }, limit: CANDIDATES });
  const bm25 = r.fused.filter((f) => f.ranks[0] !== null).sort((a, b) => a.ranks[0] - b.ranks[0]).map((f) => ({ id: f.id, score: f.scores[0] }));
  const vec = r.fused.filter((f) => f.ranks[1] !== null).sort((a, b) => a.ranks[1] - b.ranks[1]).map((f) => ({ id: f.id, score: f.scores[1] }));
  const [q2] = await second.embed([q.question], { purpose: 'query' });
  const all2 = byProject.get(project).map(({ id, vector }) => ({ id, score: dot(q2, vector) })).sort((a, b) => b.score - a.score);
  const list2 = all2.slice(0, CANDIDATES).filter((h) => h.score >= FLOOR);
  const cos2 = new Map(all2.map((h) => [h.id, h.score]));
  // MiniLM cosines for the second list's candidates too (recall gives every candidate its cosine).
  const cos1 = new Map(r.cosines);
  const missing = list2.map((h) => h.id).filter((id) => !cos1.has(id));
  if (missing.length > 0) {
    const [q1] = await minilm.embed([q.question], { purpose: 'query' });
    for (const [id, v] of await work.store.getVectors(missing, minilm)) cos1.set(id, dot(q1, v));
  }
  const product = (await cairn.recall({ query: q.question, k: K, project, touch: false, checkFiles: false })).hits.map((h) => h.memory.id);
  captures.push({ q, product, half: half.get(q.conversation), bm25, vec, list2, cos1, cos2, terms: r.terms, weights: r.weights, bm25Max: r.bm25Max, bm25Min: r.bm25Min });
}
log(`captured ${captures.length} questions in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

/** recall()'s arithmetic over captured lists; `w2` 0 leaves the second list out (recall itself). */
function rank(c, point) {
  const { vectorRankWeight: w1, vectorSignalShare: share, rrfK, bm25Range } = c.weights;
  let lists = [c.bm25, c.vec];
  const weights = [1, w1];
  let cos1 = c.cos1;
  if (point.averaged) {
    // One vector list: the two encoders' cosines averaged, over what either found.
    cos1 = new Map([...c.cos1].map(([id, cosine]) => [id, (cosine + (c.cos2.get(id) ?? 0)) / 2]));
    const union = new Set([...c.vec, ...c.list2].map((h) => h.id));
    lists = [c.bm25, [...union].map((id) => ({ id, score: cos1.get(id) ?? 0 })).sort((a, b) => b.score - a.score).slice(0, CANDIDATES)];
  } else if (point.w2 > 0) {
    lists.push(c.list2);
    weights.push(point.w2);
  }
  const fused = reciprocalRankFusion(lists, point.k ?? rrfK, weights);
  const k = point.k ?? rrfK;
  const maxRrf = lists.reduce((sum, list, i) => sum + (list.length > 0 ? weights[i] : 0), 0) / (k + 1);
  const present = fused.map((f) => f.id);
  const max1 = Math.max(...present.map((id) => cos1.get(id) ?? -Infinity));
  const max2 = Math.max(...present.map((id) => c.cos2.get(id) ?? -Infinity));
  const scored = [];
  for (const [position, hit] of fused.entries()) {
    const memory = memories.get(hit.id);
    let cosine = cos1.get(hit.id) ?? null;
    let cosineMax = Number.isFinite(max1) ? max1 : null;
    if (point.signal === 'mean' && point.w2 > 0) {
      const a = cosine === null ? 0 : Math.max(0, Math.min(1, cosine / max1));
      const b = Math.max(0, Math.min(1, (c.cos2.get(hit.id) ?? 0) / max2));
      cosine = (a + b) / 2;
      cosineMax = 1;
    }
    const input = {
      memory, now: 1735689600000, rrf: hit.rrf, maxRrf, bm25Max: c.bm25Max, ...(bm25Range ? { bm25Min: c.bm25Min } : {}),
      coverage: position < EXACT_FOR ? termCoverage(c.terms, memory) : roughCoverage(c.terms, memory),
      bm25Rank: hit.ranks[0] ?? null, bm25: hit.scores[0] ?? null, vectorRank: hit.ranks[1] ?? null,
      cosine, cosineMax, boostTags: [], session: null, diversify: false, vectorSignalShare: share,
    };
    scored.push({ memory, why: compositeScore(input), input });
  }
  const lifts = neighbourLifts(scored.map(({ memory, why }) => ({ memory, relevance: why.relevance })));
  for (const e of scored) {
    const lift = lifts.get(e.memory.id);
    if (lift !== undefined) e.why = compositeScore({ ...e.input, neighbour: lift });
  }
  scored.sort((a, b) => precedence(b.memory, null) - precedence(a.memory, null) || b.why.score - a.why.score);
  return scored.slice(0, K).map((s) => s.memory.id);
}

function evaluate(point) {
  const sums = { tuning: [0, 0], report: [0, 0], all: [0, 0] };
  for (const c of captures) {
    const top = (point.product ? c.product : rank(c, point)).slice(0, 5);
    const got = new Set(top.flatMap((id) => loaded.keysOf.get(id) ?? []).map((key) => key.slice(key.indexOf('/') + 1)));
    const r5 = c.q.evidence.filter((e) => got.has(e)).length / c.q.evidence.length;
    for (const s of [c.half, 'all']) {
      sums[s][0] += r5;
      sums[s][1]++;
    }
  }
  return Object.fromEntries(Object.entries(sums).map(([s, [sum, n]]) => [s, sum / n]));
}

// The product's own recall, and how many questions the offline arithmetic at w2 0 orders differently.
const differ = captures.filter((c) => rank(c, { w2: 0 }).join() !== c.product.join()).length;
log(`offline w2 0 differs from cairn.recall on ${differ} of ${captures.length} questions`);
const grid = [{ product: true }, { w2: 0 }];
for (const k of [undefined, 12, 16]) for (const w2 of [0.5, 1, 1.5, 2, 2.5, 3, 4]) for (const signal of ['minilm', 'mean']) grid.push({ w2, k, signal });
grid.push({ averaged: true, w2: 0 });
const rows = [];
for (const point of grid) {
  const r = evaluate(point);
  rows.push({ point, ...r });
  log(`${point.product ? 'cairn.recall ' : ''}${point.averaged ? 'cosines averaged ' : ''}w2 ${point.w2} k ${point.k ?? 'shipped'} signal ${point.signal ?? '-'}: tuning ${r.tuning.toFixed(4)} report ${r.report.toFixed(4)} all ${r.all.toFixed(4)}`);
}
if (args.out) writeFileSync(args.out, JSON.stringify({ second: second.model, rows }, null, 2));
await minilm.close?.();
await second.close?.();
await work.dispose();
rmSync(cacheDir, { recursive: true, force: true });
