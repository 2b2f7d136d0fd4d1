#!/usr/bin/env node
/**
 * What a MiniLM-L6-sized cross-encoder would cost per recall (issue #18), measured with the shipped
 * `all-minilm-l6-v2-q` graph: ms-marco-MiniLM-L-6-v2 has the same body (BERT, 6 layers, 384 wide,
 * 12 heads, 1,536 intermediate, the same uncased WordPiece vocabulary); its head (a 384×384 pooler
 * and a 384→1 classifier) adds about 0.1% of the work. So this runs the real input a reranker
 * would see — `[CLS] question [SEP] candidate [SEP]` with token types — through the real graph, and
 * times it; the scores it gives mean nothing (no cross-encoder weights are reachable here).
 *
 * Per question (the captured LoCoMo questions, `scripts/rerank-capture.mjs`): its first `--pairs`
 * hits as the product ranks them, scored (a) in one run of `--pairs` rows padded to the longest,
 * (b) one pair a run. Each with one and with two intra-op threads (separate sessions, order
 * alternating per question). Prints p50 wall and CPU per question, load time, RSS.
 *
 *   npm run build && nice -n 10 node scripts/rerank-cost.mjs --capture /tmp/rerank/capture.json [--pairs 20] [--queries 60]
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { onnxModelFolder } from '../dist/embed/onnx.js';

const { values: args } = parseArgs({
  options: {
    capture: { type: 'string', default: '/tmp/rerank/capture.json' },
    pairs: { type: 'string', default: '20' },
    queries: { type: 'string', default: '60' },
    model: { type: 'string', default: 'all-minilm-l6-v2-q' },
    'max-tokens': { type: 'string', default: '256' },
  },
});
const pairs = Number(args.pairs);
const maxTokens = Number(args['max-tokens']);
const capture = JSON.parse(readFileSync(args.capture, 'utf8'));
const questions = capture.questions.filter((q) => q.hits.length >= pairs).slice(0, Number(args.queries));
const folder = onnxModelFolder(args.model);
const mb = () => process.memoryUsage().rss / 1048576;

const rssIdle = mb();
let t = performance.now();
const [ort, tokenizers] = await Promise.all([import('onnxruntime-node'), import('@huggingface/tokenizers')]);
const tokenizer = new tokenizers.Tokenizer(JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8')), {});
const session = (threads) =>
  ort.InferenceSession.create(join(folder, 'model.onnx'), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
const one = await session(1);
const loadMs = performance.now() - t;
const rssOne = mb();
const sessions = { 1: one, 2: await session(2) };

/** Token ids and types of a (question, candidate) pair, the candidate cut first when too long. */
function encodePair(question, text) {
  const e = tokenizer.encode(question, { text_pair: text, return_token_type_ids: true });
  let ids = e.ids;
  let types = e.token_type_ids;
  if (ids.length > maxTokens) {
    ids = [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]];
    types = [...types.slice(0, maxTokens - 1), types[types.length - 1]];
  }
  return { ids, types };
}

async function runRows(s, rows) {
  const width = Math.max(...rows.map((r) => r.ids.length));
  const n = rows.length;
  const ids = new BigInt64Array(n * width);
  const mask = new BigInt64Array(n * width);
  const types = new BigInt64Array(n * width);
  rows.forEach((r, i) => {
    r.ids.forEach((id, j) => {
      ids[i * width + j] = BigInt(id);
      mask[i * width + j] = 1n;
      types[i * width + j] = BigInt(r.types[j]);
    });
  });
  const dims = [n, width];
  const feeds = { input_ids: new ort.Tensor('int64', ids, dims), attention_mask: new ort.Tensor('int64', mask, dims) };
  if (s.inputNames.includes('token_type_ids')) feeds.token_type_ids = new ort.Tensor('int64', types, dims);
  const out = await s.run(feeds);
  return out[s.outputNames[0]].dims;
}

async function timed(fn) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await fn();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

// Warm up both sessions.
const warm = questions[0].hits.slice(0, pairs).map((h) => encodePair(questions[0].question, h.text));
for (const s of Object.values(sessions)) await runRows(s, warm);

const results = { '1 batch': [], '2 batch': [], '1 single': [], '2 single': [], '1 maxsim': [], '2 maxsim': [], '1 maxsim-batch': [], '2 maxsim-batch': [] };
/** A text alone (no pair, token type 0), as the bi-encoder sees it: what the token-level rerank runs. */
function encodeOne(text) {
  let ids = tokenizer.encode(text, { add_special_tokens: true }).ids;
  if (ids.length > maxTokens) ids = [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]];
  return { ids, types: ids.map(() => 0) };
}
const lengths = [];
let tokenizeMs = 0;
for (const [i, q] of questions.entries()) {
  const tk = performance.now();
  const rows = q.hits.slice(0, pairs).map((h) => encodePair(q.question, h.text));
  tokenizeMs += performance.now() - tk;
  lengths.push(...rows.map((r) => r.ids.length));
  const order = i % 2 === 0 ? [1, 2] : [2, 1];
  for (const threads of order) results[`${threads} batch`].push(await timed(() => runRows(sessions[threads], rows)));
  for (const threads of [...order].reverse()) {
    results[`${threads} single`].push(
      await timed(async () => {
        for (const r of rows) await runRows(sessions[threads], [r]);
      }),
    );
  }
  // Token-level rerank (scripts/rerank-maxsim.mjs): the question's run is recall's own query
  // embedding, so only the candidates cost: alone (the memory's text, no context), one a run or in one run.
  const alone = q.hits.slice(0, pairs).map((h) => encodeOne(h.turnText ?? h.text));
  for (const threads of order) {
    results[`${threads} maxsim`].push(
      await timed(async () => {
        for (const r of alone) await runRows(sessions[threads], [r]);
      }),
    );
    results[`${threads} maxsim-batch`].push(await timed(() => runRows(sessions[threads], alone)));
  }
}
const rssAfter = mb();
const out = [
  `model ${args.model} (${(statSync(join(folder, 'model.onnx')).size / 1048576).toFixed(1)} MB), ${questions.length} LoCoMo questions × ${pairs} pairs; pair length p50 ${median(lengths)} tokens, max ${Math.max(...lengths)}`,
  `load (runtime import + tokenizer + one session): ${loadMs.toFixed(0)} ms; tokenizing ${(tokenizeMs / questions.length).toFixed(2)} ms a question`,
];
for (const [label, xs] of Object.entries(results)) {
  const what = { batch: `cross-encoder input, one run of ${pairs} pairs`, single: `cross-encoder input, ${pairs} runs of one pair`, maxsim: `token rerank, ${pairs} runs of one memory text`, 'maxsim-batch': `token rerank, one run of ${pairs} memory texts` }[label.split(' ')[1]];
  out.push(`  ${label.startsWith('1') ? '1 thread ' : '2 threads'} ${what}: wall p50 ${median(xs.map((x) => x.wall)).toFixed(1)} ms, CPU p50 ${median(xs.map((x) => x.cpu)).toFixed(1)} ms a question`);
}
out.push(`RSS: idle ${rssIdle.toFixed(1)} MB, one session loaded +${(rssOne - rssIdle).toFixed(1)} MB, both sessions after the runs +${(rssAfter - rssIdle).toFixed(1)} MB`);
process.stdout.write(`${out.join('\n')}\n`);
