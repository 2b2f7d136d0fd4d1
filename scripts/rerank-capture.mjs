#!/usr/bin/env node
/**
 * Capture, for a reranker study (issue #18), each LoCoMo question's first hits through the product:
 * the conversation loaded as `cairn import` stores it (each turn with the turn it answers as its
 * `Memory.context`), vectors from `onnx:all-minilm-l6-v2-q` computed fresh, then `cairn.recall`
 * scoped to the conversation at k 10 (the bench's call) and at `--depth` (the candidates a
 * reranker would reorder). Writes one JSON file: per question its half, evidence turns, the k-10
 * hits and the deeper hits with the text the product embeds (`embeddingText`) and recall's score;
 * and the same k-10 call with the product's default rerank (src/recall/rerank.ts): its hits,
 * evidence recall@5 on both halves, and the wall time of both calls (alternating, one process).
 *
 *   npm run build && nice -n 10 node scripts/rerank-capture.mjs --data ../shared/data --out /tmp/rerank/capture.json
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEmbedder, reindex } from '../dist/testing.js';
import { ConversationContext } from '../dist/index.js';
import { embeddingText } from '../dist/embed/embedding-text.js';
import { parseLocomo, turnProvenance } from '../bench/dist/suites/locomo.js';
import { benchCairn, bulkRemember, freshStore } from '../bench/dist/suites/beir.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    depth: { type: 'string', default: '30' },
    out: { type: 'string', default: '/tmp/rerank/capture.json' },
  },
});
const depth = Number(args.depth);
const data = parseLocomo(JSON.parse(readFileSync(join(args.data, 'locomo', 'locomo-dev.json'), 'utf8')));
const cacheDir = mkdtempSync(join(tmpdir(), 'rerank-capture-'));
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
const cairn = benchCairn(work.store, minilm);
const loaded = await bulkRemember(cairn, items);
log(`${loaded.written} memories; embedding with ${minilm.model}`);
let t0 = performance.now();
await reindex(work.store, minilm);
log(`reindex ${((performance.now() - t0) / 1000).toFixed(0)} s`);

const half = new Map(data.conversations.map((c, i) => [c.id, i % 2 === 0 ? 'tuning' : 'report']));
const turnOf = (id) => {
  const key = (loaded.keysOf.get(id) ?? [])[0] ?? '';
  return key.slice(key.indexOf('/') + 1);
};
const questions = [];
const plainMs = [];
const rerankMs = [];
t0 = performance.now();
for (const q of data.questions) {
  const project = `locomo-${q.conversation}`;
  // Recall's own order (the rerank off), the candidates a reranker reorders.
  const at10 = (await cairn.recall({ query: q.question, k: 10, project, touch: false, checkFiles: false, rerank: false })).hits;
  const deep = (await cairn.recall({ query: q.question, k: depth, project, touch: false, checkFiles: false, rerank: false })).hits;
  // The product's default rerank (stored token signatures, src/recall/rerank.ts), at the bench's k 10, timed against the call without it.
  let t = performance.now();
  await cairn.recall({ query: q.question, k: 10, project, touch: false, checkFiles: false, rerank: false });
  plainMs.push(performance.now() - t);
  t = performance.now();
  const reranked = await cairn.recall({ query: q.question, k: 10, project, touch: false, checkFiles: false });
  rerankMs.push(performance.now() - t);
  if (reranked.reranked !== true || reranked.rerankNote) throw new Error(`recall did not rerank every hit: ${reranked.rerankNote ?? 'no token states'}`);
  questions.push({
    question: q.question,
    category: q.category,
    conversation: q.conversation,
    half: half.get(q.conversation),
    evidence: q.evidence,
    at10: at10.map((h) => turnOf(h.memory.id)),
    reranked: reranked.hits.map((h) => turnOf(h.memory.id)),
    hits: deep.map((h) => ({ turn: turnOf(h.memory.id), text: embeddingText(h.memory), turnText: h.memory.text, score: h.score })),
  });
}
log(`captured ${questions.length} questions in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
log(`recall k 10 wall p50: plain ${median(plainMs).toFixed(1)} ms, rerank ${median(rerankMs).toFixed(1)} ms (same process, alternating)`);
for (const key of ['at10', 'reranked']) {
  const sums = { tuning: [0, 0], report: [0, 0], all: [0, 0] };
  for (const q of questions) {
    const top = new Set(q[key].slice(0, 5));
    const r5 = q.evidence.filter((e) => top.has(e)).length / q.evidence.length;
    for (const s of [q.half, 'all']) {
      sums[s][0] += r5;
      sums[s][1]++;
    }
  }
  const r = Object.fromEntries(Object.entries(sums).map(([s, [sum, n]]) => [s, (sum / n).toFixed(4)]));
  log(`${key === 'at10' ? 'cairn.recall' : 'cairn.recall rerank'}: evidence recall@5 tuning ${r.tuning} report ${r.report} all ${r.all}`);
}
writeFileSync(args.out, JSON.stringify({ model: minilm.model, depth, questions }));
await minilm.close?.();
await work.dispose();
rmSync(cacheDir, { recursive: true, force: true });
