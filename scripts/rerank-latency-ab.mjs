#!/usr/bin/env node
/**
 * Recall p50 A/B on a store copy (issue #18): the default (reranked by token signatures) against `rerank: false`, alternating per query, same process.
 *   npm run build && node scripts/rerank-latency-ab.mjs --db <corpus copy .db> --manifest <its .json> [--queries 300]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createCairn, openSqliteStore } from '../dist/index.js';
import { createEmbedder } from '../dist/testing.js';
const { values: args } = parseArgs({ options: { db: { type: 'string' }, manifest: { type: 'string' }, queries: { type: 'string', default: '300' } } });
if (!args.db || !args.manifest) throw new Error('--db and --manifest are required');
const m = JSON.parse(readFileSync(args.manifest, 'utf8'));
const store = await openSqliteStore(args.db, { textSearch: 'worker' });
const embedder = await createEmbedder('onnx:all-minilm-l6-v2-q');
const cairn = createCairn({ store, embedder, clock: { now: () => Date.UTC(2026, 0, 1) }, actor: 'bench' });
const qs = m.queries.slice(0, Number(args.queries) + 30);
const on = [], off = [];
let full = 0;
for (const [i, q] of qs.entries()) {
  for (const rerank of i % 2 ? [false, true] : [true, false]) {
    const t = performance.now();
    const r = await cairn.recall({ query: q.text, k: 10, project: q.project, touch: false, ...(rerank ? {} : { rerank: false }) });
    const ms = performance.now() - t;
    if (i < 30) continue;
    (rerank ? on : off).push(ms);
    if (rerank && r.reranked && !r.rerankNote) full++;
  }
}
const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`reranked p50 ${p50(on).toFixed(2)} ms, rerank off p50 ${p50(off).toFixed(2)} ms, ratio ${(p50(on) / p50(off)).toFixed(3)}; ${full} of ${on.length} fully reranked; load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
await store.close();
await embedder.close?.();
