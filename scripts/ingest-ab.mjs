#!/usr/bin/env node
/**
 * Ingest throughput, A against B, in one run: `node scripts/ingest-ab.mjs <buildA> <buildB> <transcripts> [reps]`.
 * Each build is a checkout with `dist/` built (e.g. `git archive <commit> | tar -x -C /tmp/a`,
 * node_modules linked, `npx tsc -p tsconfig.build.json`). Every rep ingests the same folder into a
 * fresh SQLite store (distillation off, as `cairn bench ingest` does), once per build, in
 * alternating order, each in its own Node process; prints the medians and the ratio B / A.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [mode, ...args] = process.argv.slice(2);

if (mode === '--one') {
  const [build, data] = args;
  const dir = mkdtempSync(join(tmpdir(), 'cairn-ab-'));
  try {
    const { openSqliteStore } = await import(pathToFileURL(join(build, 'dist/store/sqlite/store.js')).href);
    const { createCairn } = await import(pathToFileURL(join(build, 'dist/cairn.js')).href);
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    const cairn = createCairn({ store, actor: 'bench' });
    const started = performance.now();
    const summary = await cairn.ingest([data], { distill: false });
    const ms = performance.now() - started;
    const stats = await store.substrate?.substrateStats();
    await store.close();
    process.stdout.write(JSON.stringify({ ms, bytes: summary.bytes, turns: stats?.turns ?? 0, facts: summary.facts ?? 0, badLines: summary.badLines, workers: summary.workers }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const [a, b, data, repsArg] = [mode, ...args];
  if (!a || !b || !data) {
    console.error('usage: node scripts/ingest-ab.mjs <buildA> <buildB> <transcripts> [reps]');
    process.exit(1);
  }
  const reps = Number(repsArg ?? 5);
  const runs = { A: [], B: [] };
  const load = [loadavg()[0]];
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
    for (const which of order) {
      const build = resolve(which === 'A' ? a : b);
      const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--one', build, resolve(data)], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (child.status !== 0) {
        console.error(child.stderr);
        process.exit(1);
      }
      const run = JSON.parse(child.stdout);
      runs[which].push(run);
      console.error(`rep ${rep + 1} ${which}: ${(run.bytes / 1e6 / (run.ms / 1000)).toFixed(1)} MB/s, ${run.turns} turns, ${run.facts} facts`);
    }
    load.push(loadavg()[0]);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const mbs = (r) => r.bytes / 1e6 / (r.ms / 1000);
  const A = median(runs.A.map(mbs));
  const B = median(runs.B.map(mbs));
  console.log(JSON.stringify({ reps, aMbS: +A.toFixed(1), bMbS: +B.toFixed(1), ratio: +(B / A).toFixed(3), turnsA: runs.A[0].turns, turnsB: runs.B[0].turns, factsB: runs.B[0].facts, load1: load.map((l) => +l.toFixed(2)) }));
}
