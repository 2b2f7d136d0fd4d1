#!/usr/bin/env node
/**
 * remember latency of one build on a copy of a cached bench corpus, per call, wall and CPU time:
 *   node scripts/write-ab.mjs <build> <corpus.db> <none|hash|minilm> [calls=300] [warmup=30]
 * `<build>` is a checkout with `dist/` built (this one: `.`); `<corpus.db>` a corpus that
 * `cairn bench write` cached (`~/.cairn/bench-cache/corpus-v1-schema10-s42-n10000.db`, or the
 * `-hash_v1_64` one for `hash`). The workload is the bench write suite's (the corpus generator
 * with another seed); `minilm` is the default embedder (`onnx:all-minilm-l6-v2-q`, models/).
 * Run it for two builds back to back (and again in the other order) for an A/B: on a loaded
 * machine CPU time per call (all threads, process.cpuUsage) is the steadier figure. Prints one
 * JSON line: p50/p95/p99/max wall, p50/mean CPU, how many calls reported similar memories, a digest of
 * every call's decision (stored text, created, each similar memory's text and score, in order), and with an
 * embedder the p50 of embedding the same texts alone. With `STATEMENTS=1`, a second line: wall time
 * per SQL statement inside the timed calls (better-sqlite3's run/get/all/iterate wrapped), mean and
 * p50 per call, and the mean of the slowest 5% of calls (where a p95 goes). With `PHASES=1`, a line
 * of wall time per store method and embedder call inside the timed calls (p50, p50 over the second
 * half of the calls, mean). The first line also gives the wall p50 of each half of the calls (a
 * process's first searches fill the int8 copies of the vectors) and, with an embedder, the p50 of
 * each call less its own embed calls (as `cairn bench write` reports it).
 * A corpus with a saved HNSW index beside it (`<corpus.db>.vectors.json` and the file it names, as
 * the store saves them) is copied with it and the index read whole (`open: 'load'`, mutable, as an
 * index built in the process is) instead of rebuilt on every run (~90 s of CPU at 100K).
 * `ORT_THREADS=<n>` runs `minilm` at n ONNX Runtime intra-op threads (default: the product's, min(2, CPUs));
 * `ORT_WORKERS=<n>` (n ≥ 2) in the worker pool of onnx-pool.ts instead of this thread. The first line
 * also gives the wall and CPU p50 of each quarter of the calls.
 */
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';

const [buildArg, corpus, kind = 'none', callsArg = '300', warmArg = '30'] = process.argv.slice(2);
if (!buildArg || !corpus || !['none', 'hash', 'minilm'].includes(kind)) {
  console.error('usage: node scripts/write-ab.mjs <build> <corpus.db> <none|hash|minilm> [calls] [warmup]');
  process.exit(2);
}
const build = resolve(buildArg);
const load = (path) => import(pathToFileURL(join(build, path)).href);
const { createCairn, openSqliteStore } = await load('dist/index.js');
const testing = await load('dist/testing.js');
const { generateCorpus, CORPUS_NOW } = await import(pathToFileURL(resolve(import.meta.dirname, '../bench/dist/corpus.js')).href);

// Per-statement wall time (STATEMENTS=1): the build's better-sqlite3 Statement methods, wrapped.
let statementTimes = null;
if (process.env.STATEMENTS === '1') {
  const Database = createRequire(join(build, 'package.json'))('better-sqlite3');
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = proto[method];
    proto[method] = function (...args) {
      if (statementTimes === null) return original.apply(this, args);
      const t0 = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        const key = this.source.replace(/\s+/g, ' ').slice(0, 100);
        statementTimes.set(key, (statementTimes.get(key) ?? 0) + Number(process.hrtime.bigint() - t0) / 1e6);
      }
    };
  }
}
const perCall = [];

const calls = Number(callsArg);
const warmup = Number(warmArg);
const inputs = [];
for (const m of generateCorpus({ seed: 42 + 1_000_003, size: calls + warmup, queries: 0 })) {
  inputs.push({ text: m.text, kind: m.kind, scope: m.scope, project: m.project, session: m.session, tags: m.tags, source: m.source });
}
const name = `cairn-write-ab-${process.pid}.db`;
const path = join(tmpdir(), name);
copyFileSync(corpus, path);
const sidecar = `${corpus}.vectors.json`;
const saved = existsSync(sidecar) ? JSON.parse(readFileSync(sidecar, 'utf8')) : null;
if (saved) {
  const file = `${name}.vectors.${saved.seq}-copy.usearch`;
  copyFileSync(join(dirname(corpus), saved.file), join(tmpdir(), file));
  writeFileSync(`${path}.vectors.json`, JSON.stringify({ ...saved, file }));
}
const embedder = kind === 'hash' ? testing.createHashEmbedder() : kind === 'minilm' ? await testing.createEmbedder(testing.DEFAULT_EMBEDDER_SPEC, { ...(process.env.ORT_THREADS ? { threads: Number(process.env.ORT_THREADS) } : {}), ...(process.env.ORT_WORKERS ? { workers: Number(process.env.ORT_WORKERS) } : {}) }) : null;
const store = await openSqliteStore(path, { vectorIndex: { build: 'inline', ...(saved ? { open: 'load' } : {}) } });
// A build with the near-duplicate band index fills it for the corpus's memories first (untimed),
// as a corpus built by that build would hold it.
const filled = store.fillNearDuplicateIndex ? await store.fillNearDuplicateIndex() : null;
// Per store call (PHASES=1): wall time of each store method inside the timed calls, and the time of the embedder's calls.
let phaseTimes = null;
const timePhase = (key, ms) => phaseTimes && phaseTimes.set(key, (phaseTimes.get(key) ?? 0) + ms);
const timed = (target, key, fn) =>
  async function (...args) {
    const t0 = process.hrtime.bigint();
    try {
      return await fn.apply(target, args);
    } finally {
      timePhase(key, Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
if (process.env.PHASES === '1') {
  for (const method of ['findByContentHash', 'nearDuplicateCandidates', 'searchVector', 'getVectors', 'getMemoryTexts', 'writeMemory', 'fillNearDuplicateIndex', 'vectorModel']) {
    if (typeof store[method] === 'function') store[method] = timed(store, method, store[method]);
  }
}
const embedSpent = { ms: 0 };
const timedEmbedder = embedder && Object.create(embedder);
if (timedEmbedder) {
  for (const method of ['embed', 'embedSigned']) {
    if (typeof embedder[method] !== 'function') continue;
    timedEmbedder[method] = async (...args) => {
      const t0 = process.hrtime.bigint();
      try {
        return await embedder[method](...args);
      } finally {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        embedSpent.ms += ms;
        timePhase(method, ms);
      }
    };
  }
}
const perPhase = [];
const cairn = createCairn({ store, embedder: timedEmbedder, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
const minusEmbedding = [];
const wall = [];
const cpu = [];
let similar = 0;
const decisions = createHash('sha256');
try {
  for (const input of inputs.slice(0, warmup)) await cairn.remember(input);
  for (const input of inputs.slice(warmup)) {
    if (process.env.STATEMENTS === '1') statementTimes = new Map();
    if (process.env.PHASES === '1') phaseTimes = new Map();
    embedSpent.ms = 0;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const written = await cairn.remember(input);
    wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
    minusEmbedding.push(wall[wall.length - 1] - embedSpent.ms);
    if (phaseTimes) perPhase.push(phaseTimes);
    phaseTimes = null;
    if (statementTimes) perCall.push(statementTimes);
    statementTimes = null;
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    if (written.similar.length > 0) similar++;
    // What the check decided, without the run's random ids: the stored text and each similar memory's text and score.
    decisions.update(JSON.stringify([written.memory.text, written.created, written.similar.map((m) => [m.text, m.similarity])]));
  }
} finally {
  await store.close();
  // The database, its WAL and the vector index files saved beside it.
  for (const file of readdirSync(tmpdir())) if (file.startsWith(name)) rmSync(join(tmpdir(), file), { force: true, recursive: true });
}
const embedAlone = [];
if (embedder) {
  for (const input of inputs.slice(warmup)) {
    const t0 = process.hrtime.bigint();
    await embedder.embed([input.text]);
    embedAlone.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  // A worker pool's threads would keep the process alive.
  await embedder.close?.();
}
const quantile = (values, q) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3));
};
console.log(
  JSON.stringify({
    build,
    embedder: embedder?.model ?? null,
    calls: wall.length,
    wallP50: quantile(wall, 0.5),
    wallP50FirstHalf: quantile(wall.slice(0, wall.length >> 1), 0.5),
    wallP50SecondHalf: quantile(wall.slice(wall.length >> 1), 0.5),
    wallP50Quarters: [0, 1, 2, 3].map((q) => quantile(wall.slice((q * wall.length) >> 2, ((q + 1) * wall.length) >> 2), 0.5)),
    cpuP50Quarters: [0, 1, 2, 3].map((q) => quantile(cpu.slice((q * cpu.length) >> 2, ((q + 1) * cpu.length) >> 2), 0.5)),
    minusEmbeddingP50: embedder ? quantile(minusEmbedding, 0.5) : null,
    wallP95: quantile(wall, 0.95),
    wallP99: quantile(wall, 0.99),
    wallMax: quantile(wall, 1),
    cpuP50: quantile(cpu, 0.5),
    cpuMean: Number((cpu.reduce((a, b) => a + b, 0) / cpu.length).toFixed(3)),
    callsWithSimilar: similar,
    decisions: decisions.digest('hex').slice(0, 16),
    embeddingAloneP50: quantile(embedAlone, 0.5),
    bandsFilled: filled?.filled ?? null,
    savedIndex: saved !== null,
  }),
);
if (perPhase.length > 0) {
  const keys = new Set(perPhase.flatMap((times) => [...times.keys()]));
  const half = perPhase.slice(perPhase.length >> 1);
  const rows = [...keys].map((key) => ({ phase: key, p50: quantile(perPhase.map((t) => t.get(key) ?? 0), 0.5), p50SecondHalf: quantile(half.map((t) => t.get(key) ?? 0), 0.5), p50Quarters: [0, 1, 2, 3].map((q) => quantile(perPhase.slice((q * perPhase.length) >> 2, ((q + 1) * perPhase.length) >> 2).map((t) => t.get(key) ?? 0), 0.5)), mean: +(perPhase.reduce((s, t) => s + (t.get(key) ?? 0), 0) / perPhase.length).toFixed(3) }));
  console.log(JSON.stringify({ phases: rows.sort((a, b) => b.mean - a.mean) }));
}
if (perCall.length > 0) {
  const slowest = wall.map((ms, i) => [ms, i]).sort((a, b) => b[0] - a[0]).slice(0, Math.ceil(wall.length / 20)).map(([, i]) => perCall[i]);
  const keys = new Set(perCall.flatMap((times) => [...times.keys()]));
  const mean = (list, key) => list.reduce((sum, times) => sum + (times.get(key) ?? 0), 0) / list.length;
  const rows = [...keys].map((key) => ({ statement: key, mean: +mean(perCall, key).toFixed(3), p50: quantile(perCall.map((times) => times.get(key) ?? 0), 0.5), slowest5pcMean: +mean(slowest, key).toFixed(3) }));
  console.log(JSON.stringify({ statements: rows.sort((a, b) => b.mean - a.mean).slice(0, 12) }));
}
