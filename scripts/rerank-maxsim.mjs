#!/usr/bin/env node
/**
 * Reranking the product's first hits on LoCoMo offline (issue #18), with what this machine has:
 *
 * - `oracle`: the evidence turns among the first N moved to the top — the ceiling any reranker of
 *   depth N could reach (recall@5 if it were perfect).
 * - `maxsim`: a token-level judgement from the shipped bi-encoder, ColBERT's late interaction
 *   without ColBERT's training: `all-minilm-l6-v2-q`'s last-layer token states, each L2-normalised;
 *   a candidate scores the mean over the question's tokens of the best cosine with any of the
 *   candidate's tokens. It compares words in context, which the pooled cosine cannot.
 *   Blended with the product's order by weighted reciprocal ranks: 1 / (k + product rank) +
 *   w / (k + maxsim rank), over the first N; ranks past N are the product's.
 *
 * Grid (N, k, w, candidate text: the turn alone or the turn with its context, question pieces:
 * all or content only); both halves and all printed, the best points by the tuning half.
 * Candidates come from `scripts/rerank-capture.mjs` (LoCoMo, evidence recall@5) or
 * `scripts/rerank-capture-beir.mjs` (SciFact nDCG@10, CoSQA MRR@10, as the bench computes them).
 * `--scored` writes the capture with its scores (read back as is on a later run); `--show
 * 'N,k,w,text;…'` prints those points; `scripts/rerank-choose.mjs` picks one across the three sets.
 *
 *   npm run build && nice -n 10 node scripts/rerank-maxsim.mjs --capture /tmp/rerank/capture.json [--out /tmp/rerank/maxsim.json]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { onnxModelFolder } from '../dist/embed/onnx.js';
import { STOPWORDS } from '../dist/recall/stopwords.js';
import { rankingMetrics } from '../dist/testing.js';

const { values: args } = parseArgs({
  options: {
    capture: { type: 'string', default: '/tmp/rerank/capture.json' },
    out: { type: 'string' },
    scored: { type: 'string' },
    show: { type: 'string' },
  },
});
const capture = JSON.parse(readFileSync(args.capture, 'utf8'));
const folder = onnxModelFolder('all-minilm-l6-v2-q');
const [ort, tokenizers] = await Promise.all([import('onnxruntime-node'), import('@huggingface/tokenizers')]);
const tokenizer = new tokenizers.Tokenizer(JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8')), {});
const session = await ort.InferenceSession.create(join(folder, 'model.onnx'), {
  intraOpNumThreads: 2,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  extra: { session: { intra_op: { allow_spinning: '0' } } },
});
const log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

/** Normalised token states of a text, special tokens ([CLS], [SEP]) left out; one text a run. */
const states = new Map();
async function tokenStates(text) {
  const cached = states.get(text);
  if (cached) return cached;
  const encoded = tokenizer.encode(text, { add_special_tokens: true });
  let ids = encoded.ids;
  if (ids.length > 256) ids = [...ids.slice(0, 255), ids[ids.length - 1]];
  const n = ids.length;
  const feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
  };
  if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(n), [1, n]);
  const out = (await session.run(feeds))[session.outputNames[0]];
  const dim = out.dims[2];
  const rows = [];
  for (let t = 1; t < n - 1; t++) {
    const v = out.data.slice(t * dim, (t + 1) * dim);
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < dim; d++) v[d] /= norm;
    rows.push(v);
    // A content token: not an English function word, not punctuation (a word piece keeps its word's verdict).
    const token = encoded.tokens[t] ?? '';
    rows.content ??= [];
    rows.content.push(!token.startsWith('##') ? /[\p{L}\p{N}]/u.test(token) && !STOPWORDS.has(token) : rows.content[rows.content.length - 1] ?? true);
  }
  states.set(text, rows);
  return rows;
}

function maxsim(q, d, contentOnly = false) {
  if (q.length === 0 || d.length === 0) return 0;
  let sum = 0;
  let count = 0;
  for (const [j, qv] of q.entries()) {
    if (contentOnly && q.content?.some(Boolean) && !q.content[j]) continue;
    count++;
    let best = -1;
    for (const dv of d) {
      let s = 0;
      for (let i = 0; i < qv.length; i++) s += qv[i] * dv[i];
      if (s > best) best = s;
    }
    sum += best;
  }
  return sum / count;
}

// Score every captured candidate once (a capture already scored, `--scored`, is read back as is).
const beir = capture.kind === 'beir';
const questions = beir ? capture.queries : capture.questions;
const DEPTH = 30;
let t0 = performance.now();
if (!questions[0].hits[0].ms) {
  for (const [i, q] of questions.entries()) {
    const qs = await tokenStates(q.question);
    for (const h of q.hits.slice(0, DEPTH)) {
      const ctx = await tokenStates(h.text);
      const turn = beir ? ctx : await tokenStates(h.turnText);
      h.ms = { context: maxsim(qs, ctx), turn: maxsim(qs, turn), 'context content': maxsim(qs, ctx, true), 'turn content': maxsim(qs, turn, true) };
    }
    if (i % 100 === 0) log(`scored ${i}/${questions.length} questions (${states.size} texts)`);
  }
  log(`scored in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  if (args.scored) writeFileSync(args.scored, JSON.stringify(capture));
}

/** The hits of `q` in the order of `point`. */
function order(q, point) {
  const hits = q.hits;
  if (point.kind === 'product') return hits;
  const head = hits.slice(0, point.n);
  const tail = hits.slice(point.n);
  if (point.kind === 'oracle') {
    const good = (h) => (beir ? h.docs.some((d) => (q.qrels[d] ?? 0) > 0) : q.evidence.includes(h.turn));
    return [...head.filter(good), ...head.filter((h) => !good(h)), ...tail];
  }
  const byMaxsim = head.map((h, i) => ({ i, s: h.ms[point.text] })).sort((a, b) => b.s - a.s);
  const msRank = new Map(byMaxsim.map((x, r) => [x.i, r + 1]));
  const blended = head.map((h, i) => ({ h, i, s: 1 / (point.k + i + 1) + point.w / (point.k + msRank.get(i)) }));
  blended.sort((a, b) => b.s - a.s || a.i - b.i);
  return [...blended.map((x) => x.h), ...tail];
}

/** LoCoMo: evidence recall@5; SciFact: nDCG@10; CoSQA: MRR@10 — as the bench computes them. */
const metricName = beir ? (capture.set === 'cosqa' ? 'MRR@10' : 'nDCG@10') : 'recall@5';
function measure(q, hits) {
  if (beir) {
    const m = rankingMetrics(hits.flatMap((h) => h.docs), new Map(Object.entries(q.qrels)));
    return capture.set === 'cosqa' ? m.mrrAt10 : m.ndcgAt10;
  }
  const top = new Set(hits.slice(0, 5).map((h) => h.turn ?? h));
  return q.evidence.filter((e) => top.has(e)).length / q.evidence.length;
}
function evaluate(point) {
  const sums = { tuning: [0, 0], report: [0, 0], all: [0, 0] };
  for (const q of questions) {
    const v = point.kind === 'bench' ? measure(q, q.at10) : measure(q, order(q, point));
    for (const s of [q.half, 'all']) {
      sums[s][0] += v;
      sums[s][1]++;
    }
  }
  return Object.fromEntries(Object.entries(sums).map(([s, [sum, n]]) => [s, sum / n]));
}

const fmt = (r) => `tuning ${r.tuning.toFixed(4)} report ${r.report.toFixed(4)} all ${r.all.toFixed(4)}`;
log(`${beir ? capture.set : 'locomo'} ${metricName}, ${questions.length} questions`);
const grid = [{ kind: 'product' }];
if (!beir) {
  // The bench's own call is k 10; the deeper capture (k 30) ranks 150 candidates, not 50.
  const same = questions.filter((q) => q.at10.slice(0, 5).join() === q.hits.slice(0, 5).map((h) => h.turn).join()).length;
  log(`top 5 at k 10 equals top 5 at k ${capture.depth} for ${same} of ${questions.length} questions`);
  grid.unshift({ kind: 'bench' });
}
for (const n of [10, 20, 30]) grid.push({ kind: 'oracle', n });
const texts = beir ? ['context', 'context content'] : ['context', 'turn', 'context content', 'turn content'];
for (const n of [10, 20, 30]) for (const k of [2, 5, 10, 20]) for (const w of [0.25, 0.5, 1, 2, 4, 1000]) for (const text of texts) grid.push({ kind: 'maxsim', n, k, w, text });
const rows = [];
for (const point of grid) {
  const r = evaluate(point);
  rows.push({ point, ...r });
  if (point.kind !== 'maxsim') log(`${JSON.stringify(point)}: ${fmt(r)}`);
}
const ms = rows.filter((r) => r.point.kind === 'maxsim').sort((a, b) => b.tuning - a.tuning);
log('best maxsim points on the tuning half:');
for (const r of ms.slice(0, 8)) log(`  ${JSON.stringify(r.point)}: ${fmt(r)}`);
for (const spec of (args.show ?? '').split(';').filter(Boolean)) {
  const [n, k, w, text] = spec.split(',');
  const r = rows.find((x) => x.point.kind === 'maxsim' && x.point.n === Number(n) && x.point.k === Number(k) && x.point.w === Number(w) && x.point.text === text);
  log(`  shown ${spec}: ${r ? fmt(r) : 'not on the grid'}`);
}
if (args.out) writeFileSync(args.out, JSON.stringify(rows, null, 2));
await session.release();
