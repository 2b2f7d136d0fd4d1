#!/usr/bin/env node
// BM25 recall latency of two or more builds on the same corpus, in one run: each build's
// dist/index.js opens a copy of the corpus database and answers the manifest's known-answer queries
// (k 10, project filter, no touch) — 200 to warm up, then every query timed. Used to tell a code
// change from a slower machine when a figure in docs/BENCHMARKS.md moves between days.
//
//   CAIRN_EMBEDDER=none node scripts/recall-ab.mjs <corpus.db> <manifest.json> <dist/index.js> [<dist/index.js> ...]
//
// The corpus and manifest are `cairn bench`'s cache (~/.cairn/bench-cache/corpus-v1-schema<N>-s42-n100000.*);
// every build must understand that schema. Each build runs in its own process, twice, interleaved.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [db, manifest, ...libs] = process.argv.slice(2);
if (process.env.CAIRN_RECALL_AB_CHILD === '1') {
  const lib = libs[0];
  const { createCairn, openSqliteStore } = await import(pathToFileURL(resolve(lib)).href);
  const dir = mkdtempSync(join(tmpdir(), 'cairn-recall-ab-'));
  const copy = join(dir, 'corpus.db');
  copyFileSync(db, copy);
  const queries = JSON.parse(readFileSync(manifest, 'utf8')).queries;
  const store = await openSqliteStore(copy);
  const cairn = createCairn({ store, clock: { now: () => Date.UTC(2026, 0, 1) }, actor: 'bench' });
  for (const q of queries.slice(0, 200)) await cairn.recall({ query: q.text, k: 10, project: q.project, touch: false });
  const ms = [];
  for (const q of queries) {
    const start = process.hrtime.bigint();
    await cairn.recall({ query: q.text, k: 10, project: q.project, touch: false });
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  await store.close?.();
  rmSync(dir, { recursive: true, force: true });
  ms.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ p50: ms[Math.floor(ms.length / 2)], p95: ms[Math.floor(ms.length * 0.95)], n: ms.length }));
} else {
  if (!db || !manifest || libs.length === 0) {
    console.error('usage: node scripts/recall-ab.mjs <corpus.db> <manifest.json> <dist/index.js> [<dist/index.js> ...]');
    process.exit(2);
  }
  const results = new Map(libs.map((lib) => [lib, []]));
  for (let round = 0; round < 2; round++) {
    for (const lib of libs) {
      const run = spawnSync(process.execPath, [process.argv[1], db, manifest, lib], { env: { ...process.env, CAIRN_RECALL_AB_CHILD: '1', CAIRN_EMBEDDER: 'none' }, encoding: 'utf8' });
      if (run.status !== 0) {
        console.error(`${lib}: ${run.stderr.trim().split('\n').find((l) => l.includes('Error')) ?? `exit ${run.status}`}`);
        process.exit(1);
      }
      results.get(lib).push(JSON.parse(run.stdout));
    }
  }
  for (const [lib, runs] of results) console.log(`${lib}: BM25 recall p50 ${runs.map((r) => r.p50.toFixed(2)).join(' / ')} ms, p95 ${runs.map((r) => r.p95.toFixed(2)).join(' / ')} ms (${runs[0].n} queries, 2 runs)`);
}
