#!/usr/bin/env node
/**
 * Ingest throughput of several builds in one run:
 *   node scripts/ingest-ab.mjs <transcripts> <reps> <build A> <build B> [<build C> …]
 * Each build is a checkout with `dist/` built (e.g. `git archive <commit> | tar -x -C /tmp/a`,
 * node_modules linked, `npx tsc -p tsconfig.build.json`). Every rep ingests the same folder into a
 * fresh SQLite store (distillation off, as `cairn bench ingest` does), once per build, in rotating
 * order, each in its own Node process. Prints, per build, the median MB/s by wall time and by CPU
 * time (all threads: on a loaded machine CPU time is the steadier measure), and the ratios to A.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);

if (args[0] === '--one') {
  const [, build, data] = args;
  const dir = mkdtempSync(join(tmpdir(), 'cairn-ab-'));
  try {
    const { openSqliteStore } = await import(pathToFileURL(join(build, 'dist/store/sqlite/store.js')).href);
    const { createCairn } = await import(pathToFileURL(join(build, 'dist/cairn.js')).href);
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    const cairn = createCairn({ store, actor: 'bench' });
    const cpu = process.cpuUsage();
    const started = performance.now();
    const summary = await cairn.ingest([data], { distill: false });
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const stats = await store.substrate?.substrateStats();
    await store.close();
    process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, bytes: summary.bytes, turns: stats?.turns ?? 0, facts: summary.facts ?? 0, workers: summary.workers }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const [data, repsArg, ...builds] = args;
  if (!data || builds.length < 2) {
    console.error('usage: node scripts/ingest-ab.mjs <transcripts> <reps> <build A> <build B> [<build C> …]');
    process.exit(1);
  }
  const reps = Number(repsArg);
  const runs = builds.map(() => []);
  const load = [loadavg()[0]];
  for (let rep = 0; rep < reps; rep++) {
    for (let k = 0; k < builds.length; k++) {
      const which = (k + rep) % builds.length;
      const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--one', resolve(builds[which]), resolve(data)], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (child.status !== 0) {
        console.error(child.stderr);
        process.exit(1);
      }
      const run = JSON.parse(child.stdout);
      runs[which].push(run);
      console.error(`rep ${rep + 1} ${builds[which]}: ${(run.bytes / 1e6 / (run.ms / 1000)).toFixed(1)} MB/s wall, ${(run.bytes / 1e6 / (run.cpuMs / 1000)).toFixed(1)} MB/s CPU, ${run.turns} turns, ${run.facts} facts`);
    }
    load.push(loadavg()[0]);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const wall = runs.map((r) => median(r.map((x) => x.bytes / 1e6 / (x.ms / 1000))));
  const cpu = runs.map((r) => median(r.map((x) => x.bytes / 1e6 / (x.cpuMs / 1000))));
  console.log(
    JSON.stringify({
      reps,
      builds: builds.map((b, i) => ({ build: b, wallMbS: +wall[i].toFixed(1), cpuMbS: +cpu[i].toFixed(1), wallRatio: +(wall[i] / wall[0]).toFixed(3), cpuRatio: +(cpu[i] / cpu[0]).toFixed(3), turns: runs[i][0].turns, facts: runs[i][0].facts })),
      load1: load.map((l) => +l.toFixed(2)),
    }),
  );
}
