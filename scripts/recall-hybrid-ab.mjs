#!/usr/bin/env node
// Hybrid (default embedder) recall latency of two or more builds on the same corpus, in one run,
// each build in its own process, twice, interleaved: the store opened as the MCP server opens it
// (BM25 in a worker thread), the manifest's known-answer queries (k 10, project filter, no touch),
// `--warmup` to warm up, then `--queries` timed; beside it the project-filtered vector search alone
// (store.searchVector, 50 candidates). Prints p50/p95 and how many queries' top 10 match the first
// build's (ids in order).
//
//   nice -n 10 node scripts/recall-hybrid-ab.mjs <corpus.db> <manifest.json> <dist/> [<dist/> ...] [--queries 300] [--warmup 50]
//
// <corpus.db> is a copy of `cairn bench`'s MiniLM corpus (~/.cairn/bench-cache/corpus-v1-schema<N>-s42-n100000-onnx_*.db)
// with its HNSW index already saved beside it (`<db>.vectors.json`): a build of 100K vectors takes
// minutes, so this script refuses to start without one rather than build it in every process.
// Each <dist/> must sit in a checkout with its node_modules (a worktree's dist/), so its imports resolve.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { queries: { type: 'string', default: '300' }, warmup: { type: 'string', default: '50' } } });
const [db, manifest, ...dists] = positionals;
if (process.env.CAIRN_HYBRID_AB_CHILD === '1') {
  const dist = dists[0];
  const { createCairn, openSqliteStore } = await import(pathToFileURL(resolve(join(dist, 'index.js'))).href);
  const { createEmbedder, DEFAULT_EMBEDDER_SPEC } = await import(pathToFileURL(resolve(join(dist, 'testing.js'))).href);
  const all = JSON.parse(readFileSync(manifest, 'utf8')).queries;
  const count = Number(values.queries);
  const queries = all.slice(0, count);
  const warmup = all.slice(count, count + Number(values.warmup));
  const store = await openSqliteStore(db, { textSearch: 'worker' });
  const embedder = await createEmbedder(DEFAULT_EMBEDDER_SPEC);
  const cairn = createCairn({ store, embedder, clock: { now: () => Date.UTC(2026, 0, 1) }, actor: 'bench' });
  const recall = (q) => cairn.recall({ query: q.text, k: 10, project: q.project, touch: false });
  for (const q of warmup) await recall(q);
  const ms = [];
  const tops = [];
  let hybrid = 0;
  for (const q of queries) {
    const start = process.hrtime.bigint();
    const result = await recall(q);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (result.mode === 'hybrid') hybrid++;
    tops.push(result.hits.map((h) => h.memory.id));
  }
  const vectors = [];
  for (const q of queries) vectors.push((await embedder.embed([q.text], { purpose: 'query' }))[0]);
  for (const [i, q] of warmup.entries()) await store.searchVector(vectors[i % vectors.length], embedder, { project: q.project, limit: 50 });
  const search = [];
  for (const [i, q] of queries.entries()) {
    const start = process.hrtime.bigint();
    await store.searchVector(vectors[i], embedder, { project: q.project, limit: 50 });
    search.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  await embedder.close?.();
  await store.close();
  const p = (xs, f) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * f)];
  process.stdout.write(JSON.stringify({ p50: p(ms, 0.5), p95: p(ms, 0.95), search50: p(search, 0.5), search95: p(search, 0.95), hybrid, n: ms.length, tops }));
} else {
  if (!db || !manifest || dists.length === 0) {
    console.error('usage: node scripts/recall-hybrid-ab.mjs <corpus.db> <manifest.json> <dist/> [<dist/> ...] [--queries 300] [--warmup 50]');
    process.exit(2);
  }
  if (!existsSync(`${db}.vectors.json`)) {
    console.error(`${db}.vectors.json: no saved HNSW index beside the corpus (open it once with vectorIndex.build 'inline' to make one)`);
    process.exit(2);
  }
  const results = new Map(dists.map((d) => [d, []]));
  for (let round = 0; round < 2; round++) {
    for (const dist of dists) {
      const run = spawnSync(process.execPath, [process.argv[1], db, manifest, dist, '--queries', values.queries, '--warmup', values.warmup], {
        env: { ...process.env, CAIRN_HYBRID_AB_CHILD: '1' },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (run.status !== 0) {
        console.error(`${dist}: ${run.stderr.trim().split('\n').find((l) => l.includes('Error')) ?? `exit ${run.status}`}`);
        process.exit(1);
      }
      results.get(dist).push(JSON.parse(run.stdout));
    }
  }
  const reference = results.get(dists[0])[0].tops;
  const targets = JSON.parse(readFileSync(manifest, 'utf8')).queries.map((q) => q.targetId);
  for (const [dist, runs] of results) {
    const same = runs[0].tops.filter((top, i) => JSON.stringify(top) === JSON.stringify(reference[i])).length;
    const f = (key) => runs.map((r) => r[key].toFixed(2)).join(' / ');
    console.log(
      `${dist}: hybrid recall p50 ${f('p50')} ms, p95 ${f('p95')} ms; vector search p50 ${f('search50')} ms, p95 ${f('search95')} ms ` +
        `(${runs[0].n} queries, ${runs[0].hybrid} hybrid, 2 runs); top 10 as the first build's: ${same}/${runs[0].n}; ` +
        `known answer in the top 10: ${runs[0].tops.filter((top, i) => top.slice(0, 10).includes(targets[i])).length}/${runs[0].n}`,
    );
  }
}
