#!/usr/bin/env node
/**
 * Token signatures for the rerank, offline (issue #18): can the documents' side of the late
 * interaction be computed once, at write time, and stored small enough?
 *
 * The opt-in rerank (src/recall/rerank.ts) runs MiniLM on each of the first 10 hits' turn text at
 * query time. Stored instead, a memory's token states would come from the run that computes its
 * vector — over `embeddingText` (the turn with the turn it answers) — so this script compares:
 *
 * - source: `turn run` (the turn alone, today's opt-in), `embedding run, turn pieces` (the pieces
 *   of the turn within the embedding text's run), `embedding run, all pieces`;
 * - form of each stored piece: float32; int8 (one scale a piece); 1-bit sign; a fixed, seeded,
 *   data-free Gaussian projection to 64 / 96 / 128 dims stored as int8 (the query projected alike);
 *   the projection's signs;
 * - which pieces: all, content pieces only (not a stopword, not punctuation), at most N content
 *   pieces (the first N).
 *
 * Each question's k-10 hits come from a capture of the product (`scripts/rerank-capture.mjs`,
 * its `at10`), reranked as the product does (depth 10, weighted reciprocal ranks k 5 w 1, the
 * question's content pieces). Prints evidence recall@5 tuning / report / all, bytes per memory
 * (LoCoMo turns' embedding texts, and `--code` a JSONL export of code-heavy memories), and the
 * scoring CPU of 10 hits a question.
 *
 *   npm run build && nice -n 10 node scripts/rerank-signatures.mjs --capture /tmp/rerank/capture.json --data ../shared/data [--code memories.jsonl]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadOnnxEmbedder, onnxModelFolder } from '../dist/embed/onnx.js';
import { ConversationContext } from '../dist/index.js';
import { embeddingText } from '../dist/embed/embedding-text.js';
import { blendOrder, contentPieces, maxSim } from '../dist/recall/rerank.js';
import { parseLocomo, turnProvenance } from '../bench/dist/suites/locomo.js';

const { values: args } = parseArgs({
  options: {
    capture: { type: 'string', default: '/tmp/rerank/capture.json' },
    data: { type: 'string', default: '../shared/data' },
    code: { type: 'string' },
    out: { type: 'string' },
  },
});
const log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const capture = JSON.parse(readFileSync(args.capture, 'utf8'));
const data = parseLocomo(JSON.parse(readFileSync(join(args.data, 'locomo', 'locomo-dev.json'), 'utf8')));

// Each turn's text and embedding text, as `cairn import` stores a conversation (the bench's layout).
const conversation = new ConversationContext();
const turns = new Map();
for (const c of data.conversations) {
  for (const t of c.turns) {
    const context = conversation.next(turnProvenance(c.id, t.diaId), t.text);
    turns.set(`${c.id}/${t.diaId}`, { text: t.text, embedding: embeddingText({ text: t.text, context }) });
  }
}

const embedder = loadOnnxEmbedder('all-minilm-l6-v2-q', { threads: 1 });
const tokenizers = await import('@huggingface/tokenizers');
const tokenizer = new tokenizers.Tokenizer(JSON.parse(readFileSync(join(onnxModelFolder('all-minilm-l6-v2-q'), 'tokenizer.json'), 'utf8')), {});
const pieceCount = (text) => Math.min(tokenizer.encode(text, { add_special_tokens: true }).ids.length, 256) - 2;

const cache = new Map();
async function states(text) {
  let s = cache.get(text);
  if (!s) {
    [s] = await embedder.tokenStates([text]);
    cache.set(text, s);
  }
  return s;
}

// The fixed projection: a seeded Gaussian matrix (mulberry32 + Box–Muller), fitted on nothing.
function gaussian(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next());
}
const HIDDEN = 384;
const projections = new Map();
function projection(dims) {
  let p = projections.get(dims);
  if (!p) {
    const g = gaussian(0x18);
    p = Array.from({ length: dims }, () => Float32Array.from({ length: HIDDEN }, g));
    projections.set(dims, p);
  }
  return p;
}
const normalize = (v) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
};
const project = (v, dims) => {
  const p = projection(dims);
  const out = new Float32Array(dims);
  for (let d = 0; d < dims; d++) {
    const row = p[d];
    let s = 0;
    for (let i = 0; i < HIDDEN; i++) s += row[i] * v[i];
    out[d] = s;
  }
  return normalize(out);
};
const int8 = (v) => {
  let max = 0;
  for (const x of v) max = Math.max(max, Math.abs(x));
  const scale = max / 127 || 1;
  return Float32Array.from(v, (x) => Math.round(x / scale) * scale);
};
const sign = (v) => Float32Array.from(v, (x) => (x >= 0 ? 1 : -1) / Math.sqrt(v.length));

/** Forms: how a stored piece is kept (doc) and how the query's piece meets it (query). */
const FORMS = {
  float32: { doc: (v) => v, query: (v) => v, bytes: (n) => n * HIDDEN * 4 },
  int8: { doc: int8, query: (v) => v, bytes: (n) => n * (HIDDEN + 4) },
  sign: { doc: sign, query: (v) => v, bytes: (n) => n * (HIDDEN / 8) },
  'proj64 int8': { doc: (v) => int8(project(v, 64)), query: (v) => project(v, 64), bytes: (n) => n * (64 + 4) },
  'proj96 int8': { doc: (v) => int8(project(v, 96)), query: (v) => project(v, 96), bytes: (n) => n * (96 + 4) },
  'proj128 int8': { doc: (v) => int8(project(v, 128)), query: (v) => project(v, 128), bytes: (n) => n * (128 + 4) },
  'proj128 sign': { doc: (v) => sign(project(v, 128)), query: (v) => project(v, 128), bytes: (n) => n * 16 },
  'proj256 sign': { doc: (v) => sign(project(v, 256)), query: (v) => project(v, 256), bytes: (n) => n * 32 },
};
/** Which of a document's pieces are kept. */
const PIECES = {
  all: (s) => s.states.map((_, i) => i),
  content: (s) => contentPieces(s.tokens).flatMap((c, i) => (c ? [i] : [])),
  'content ≤32': (s) => contentPieces(s.tokens).flatMap((c, i) => (c ? [i] : [])).slice(0, 32),
  'content ≤16': (s) => contentPieces(s.tokens).flatMap((c, i) => (c ? [i] : [])).slice(0, 16),
};

const questions = capture.questions;
const key = (q, turn) => `${q.conversation}/${turn}`;
let t0 = performance.now();
for (const [i, q] of questions.entries()) {
  await states(q.question);
  for (const turn of q.at10) {
    const t = turns.get(key(q, turn));
    await states(t.text);
    await states(t.embedding);
  }
  if (i % 200 === 0) log(`states ${i}/${questions.length} (${cache.size} texts)`);
}
log(`model runs done in ${((performance.now() - t0) / 1000).toFixed(0)} s, ${cache.size} texts`);

/** Each text's states in each form, computed once. */
const formed = new Map();
function inForm(text, form) {
  const k = `${form}\u0000${text}`;
  let s = formed.get(k);
  if (!s) {
    const raw = cache.get(text);
    s = { tokens: raw.tokens, states: raw.states.map(FORMS[form].doc) };
    formed.set(k, s);
  }
  return s;
}
const counts = new Map();
const turnPieces = (text) => {
  let n = counts.get(text);
  if (n === undefined) counts.set(text, (n = pieceCount(text)));
  return n;
};

/** A document's stored signature under a setting: { tokens, states } as maxSim takes. */
function signature(t, source, form, pieces) {
  const full = source === 'turn run' ? inForm(t.text, form) : inForm(t.embedding, form);
  const limited = source === 'embedding run, turn pieces' ? { tokens: full.tokens.slice(0, turnPieces(t.text)), states: full.states.slice(0, turnPieces(t.text)) } : full;
  const keep = PIECES[pieces](limited);
  return { tokens: keep.map((i) => limited.tokens[i]), states: keep.map((i) => limited.states[i]) };
}

function evaluate(setting) {
  const sums = { tuning: [0, 0], report: [0, 0], all: [0, 0] };
  const bytes = [];
  const cpu = [];
  for (const q of questions) {
    let order = q.at10;
    if (setting) {
      const qs = cache.get(q.question);
      const query = { tokens: qs.tokens, states: qs.states.map(FORMS[setting.form].query) };
      const docs = q.at10.map((turn) => signature(turns.get(key(q, turn)), setting.source, setting.form, setting.pieces));
      const t = process.cpuUsage();
      const scores = docs.map((d) => maxSim(query, d));
      const used = process.cpuUsage(t);
      cpu.push((used.user + used.system) / 1000);
      order = blendOrder(scores).map((i) => q.at10[i]);
      for (const d of docs) bytes.push(FORMS[setting.form].bytes(d.states.length));
    }
    const top = new Set(order.slice(0, 5));
    const r5 = q.evidence.filter((e) => top.has(e)).length / q.evidence.length;
    for (const s of [q.half, 'all']) {
      sums[s][0] += r5;
      sums[s][1]++;
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return { ...Object.fromEntries(Object.entries(sums).map(([s, [sum, n]]) => [s, sum / n])), cpuMs: median(cpu) };
}

const rows = [];
const fmt = (r) => `${r.tuning.toFixed(4)} / ${r.report.toFixed(4)} / ${r.all.toFixed(4)}`;
const plain = evaluate(null);
log(`recall, no rerank: ${fmt(plain)}`);
rows.push({ setting: 'no rerank', ...plain });
for (const form of Object.keys(FORMS)) {
  formed.clear();
  for (const source of ['turn run', 'embedding run, turn pieces', 'embedding run, all pieces']) {
    for (const pieces of Object.keys(PIECES)) {
      if (form !== 'float32' && form !== 'int8' && source === 'turn run') continue;
      const setting = { source, form, pieces };
      const r = evaluate(setting);
      rows.push({ setting, ...r });
      log(`${source} | ${form} | ${pieces}: ${fmt(r)}  cpu p50 ${r.cpuMs.toFixed(2)} ms`);
    }
  }
}

// Bytes per memory: the pieces each piece rule keeps of the stored run (the embedding text, cut at
// 256 tokens), times each form's bytes a piece; LoCoMo's turns and, with --code, code-heavy memories.
function pieceStats(texts) {
  const out = {};
  for (const [name, rule] of Object.entries(PIECES)) {
    const counts = texts.map((text) => {
      const encoded = tokenizer.encode(text, { add_special_tokens: true });
      const n = Math.min(encoded.ids.length, 256) - 2;
      return rule({ tokens: encoded.tokens.slice(1, n + 1), states: new Array(n).fill(0) }).length;
    });
    out[name] = counts.reduce((a, b) => a + b, 0) / counts.length;
  }
  return out;
}
const sets = { locomo: [...turns.values()].map((t) => t.embedding) };
if (args.code) sets.code = readFileSync(args.code, 'utf8').split('\n').filter(Boolean).map((line) => embeddingText(JSON.parse(line)));
const sizes = {};
for (const [name, texts] of Object.entries(sets)) {
  const stats = pieceStats(texts);
  sizes[name] = { memories: texts.length, meanChars: texts.reduce((a, t) => a + t.length, 0) / texts.length, pieces: stats };
  log(`${name}: ${texts.length} memories, mean ${sizes[name].meanChars.toFixed(0)} chars; mean pieces ${Object.entries(stats).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
  for (const [form, f] of Object.entries(FORMS)) log(`  ${form}: ${Object.entries(stats).map(([k, v]) => `${k} ${f.bytes(v).toFixed(0)} B`).join(', ')}`);
}
if (args.out) writeFileSync(args.out, JSON.stringify({ rows, sizes }, null, 2));
await embedder.close();
