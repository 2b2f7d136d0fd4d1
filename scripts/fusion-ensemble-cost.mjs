#!/usr/bin/env node
/**
 * Costs of an encoder ensemble (issue #18): MiniLM plus a second shipped encoder in one process.
 * Query embedding (LoCoMo questions, one a call): wall and CPU per query for each model alone and
 * for both (one after the other, as onnxruntime-node runs two sessions of one process); RSS
 * before loading, after loading both, after embedding; memory embedding (LoCoMo turns, one a
 * call) per model, and the 100K-memory time it implies. Rounds alternate the model order.
 *
 *   npm run build && nice -n 10 node scripts/fusion-ensemble-cost.mjs --data ../shared/data [--second onnx:e5-small-v2-q]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEmbedder } from '../dist/testing.js';
import { parseLocomo } from '../bench/dist/suites/locomo.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    second: { type: 'string', default: 'onnx:e5-small-v2-q' },
    queries: { type: 'string', default: '60' },
    memories: { type: 'string', default: '300' },
  },
});
const data = parseLocomo(JSON.parse(readFileSync(join(args.data, 'locomo', 'locomo-dev.json'), 'utf8')));
const questions = data.questions.slice(0, Number(args.queries)).map((q) => q.question);
const turns = data.conversations.flatMap((c) => c.turns.map((t) => t.text)).slice(0, Number(args.memories));
const mb = () => process.memoryUsage().rss / 1048576;

const rssIdle = mb();
const models = [await createEmbedder('onnx:all-minilm-l6-v2-q'), await createEmbedder(args.second)];
for (const m of models) await m.embed(['warm up'], { purpose: 'query' });
const rssLoaded = mb();

/** Wall and CPU (user + system) milliseconds of `fn`. */
async function timed(fn) {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await fn();
  const wall = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const alone = [[], []];
const both = [];
for (const [i, q] of questions.entries()) {
  const order = i % 2 === 0 ? [0, 1] : [1, 0];
  for (const m of order) alone[m].push(await timed(() => models[m].embed([q], { purpose: 'query' })));
  both.push(await timed(async () => {
    for (const m of order) await models[m].embed([q], { purpose: 'query' });
  }));
}
const memory = [[], []];
for (const [i, text] of turns.entries()) {
  for (const m of i % 2 === 0 ? [0, 1] : [1, 0]) memory[m].push(await timed(() => models[m].embed([text], { purpose: 'document' })));
}
const rssAfter = mb();
const row = (label, xs) => `${label}: wall p50 ${median(xs.map((x) => x.wall)).toFixed(1)} ms, CPU p50 ${median(xs.map((x) => x.cpu)).toFixed(1)} ms`;
const out = [
  `query embed (${questions.length} LoCoMo questions, one a call)`,
  row(`  ${models[0].model}`, alone[0]),
  row(`  ${models[1].model}`, alone[1]),
  row('  both, one after the other', both),
  `memory embed (${turns.length} LoCoMo turns, one a call)`,
];
let cpuBoth = 0;
let wallBoth = 0;
for (const m of [0, 1]) {
  const wall = memory[m].reduce((s, x) => s + x.wall, 0) / memory[m].length;
  const cpu = memory[m].reduce((s, x) => s + x.cpu, 0) / memory[m].length;
  wallBoth += wall;
  cpuBoth += cpu;
  out.push(`  ${models[m].model}: mean wall ${wall.toFixed(1)} ms, CPU ${cpu.toFixed(1)} ms a memory`);
}
out.push(`  both: wall ${wallBoth.toFixed(1)} ms, CPU ${cpuBoth.toFixed(1)} ms a memory; 100K at this wall time ${((wallBoth * 1e5) / 60000).toFixed(1)} min, CPU / 2 cores ${((cpuBoth * 1e5) / 120000).toFixed(1)} min`);
out.push(`RSS: idle ${rssIdle.toFixed(1)} MB, both loaded +${(rssLoaded - rssIdle).toFixed(1)} MB, after embedding +${(rssAfter - rssIdle).toFixed(1)} MB`);
for (const m of models) await m.close?.();
process.stdout.write(`${out.join('\n')}\n`);
