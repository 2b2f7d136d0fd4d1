#!/usr/bin/env node
/**
 * Ingest throughput of several builds in one run:
 *   node scripts/ingest-ab.mjs <transcripts> <reps> <build A> <build B> [<build C> …]
 * Each build is a checkout with `dist/` built (e.g. `git archive <commit> | tar -x -C /tmp/a`,
 * node_modules linked, `npx tsc -p tsconfig.build.json`). Every rep ingests the same folder into a
 * fresh SQLite store (distillation off, as `cairn bench ingest` does), once per build, in rotating
 * order, each in its own Node process. Prints, per build, the median MB/s by wall time and by CPU
 * time (all threads: on a loaded machine CPU time is the steadier measure), and the ratios to A.
 * Each rep also times the machine itself: a bare read + `JSON.parse` of every line of the same
 * files in one thread (the yardstick `cairn bench ingest` reports too), so figures from different
 * days or machines can be compared as ratios to it (`cpuPerBare`: ingest MB/s of CPU / bare MB/s).
 * Where `/proc/self/task` exists (Linux), each run's CPU is also split by thread, as medians in
 * ms: `writerMs` (the main thread: the runner and every store write), `workersMs` (the threads
 * started during the ingest: the reader workers, and libuv's pool, which does next to nothing here)
 * and `helpersMs` (threads that were already there: V8's compiler and GC helpers), so readers and
 * writer can be compared build by build.
 *
 *   node scripts/ingest-ab.mjs --readers <transcripts> <reps> <build A> <build B> [<build C> …]
 * times what one reader worker does, without the writer and without the other threads' noise:
 * each rep starts one process per build (rotating order) that sets V8's flags for ingest and
 * warms up as an ingest's worker does, then reads every file in name order with `readWithTerms`
 * three times in its main thread, as a worker calls it (read, sanitize, facts, index terms, seal
 * or, from builds that tell them apart, sanitize as sealing would for posting; nothing is stored).
 * Prints per build the medians of the first read's CPU ms (`coldMs`: JIT warm-up included) and of
 * the other two (`warmMs`), and their ratios to A. Finer than a whole ingest (no second worker
 * racing the first, no SQLite): for changes to the readers worth a few per cent.
 *
 *   node scripts/ingest-ab.mjs --writer <transcripts> <reps> <build A> <build B> [<build C> …]
 * times the writing thread alone: each rep starts one process per build (rotating order) that
 * reads every file with the build's own `readWithTerms` and serializes each result as a worker's
 * message would be (untimed), then ingests the folder into a fresh store (distillation off) through
 * `ingestPaths` with a reader that deserializes and adopts those results, four files in flight
 * (the runner's default without workers; a run with workers gathers their batches into larger
 * commits). Prints per build the median CPU ms of that thread (`writerMs`: deserializing, adopting,
 * the write boundary and every store write) and its ratio to A. For changes to the writer or to
 * what crosses to it worth a few per cent, which a whole ingest does not resolve.
 *
 *   node scripts/ingest-ab.mjs --digest <build> <transcripts> [--json] [--here]
 * ingests the folder into a fresh store (one file at a time, in name order, through the reader
 * workers, or with `--here` in this thread as a run below the workers' threshold is: warmed up
 * in builds that warm up there), distils every session, and prints a canonical sha256 of what was
 * stored, per table (sessions, turns, index terms of turns/facts/memories, compactions,
 * corrections, session facts and their references, memories without their ids and times,
 * cursors) and of the ingest summary's counts (lines, outcomes, redactions by kind, facts): a
 * speed change must leave every hash as it was. `--json` prints the rows too (to diff).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);

/** Every file under `dir`, in name order. */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

/**
 * The yardstick: MB/s of reading every file and `JSON.parse`-ing each line that starts with `{`
 * or `[`, in this thread (as `cairn bench ingest`'s bare loop); CPU time, so load counts less.
 */
function bareLoop(files) {
  const cpu = process.cpuUsage();
  let bytes = 0;
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    bytes += Buffer.byteLength(text);
    for (let start = 0; start < text.length; ) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const c = text.charCodeAt(start);
      if (c === 123 || c === 91) {
        try {
          JSON.parse(text.slice(start, end));
        } catch {
          // a partial or non-JSON line
        }
      }
      start = end + 1;
    }
  }
  const used = process.cpuUsage(cpu);
  return bytes / 1e6 / ((used.user + used.system) / 1e6);
}

/** Rows of `sql`, each as a JSON string, sorted: a canonical form independent of write order. */
function canonicalRows(db, sql) {
  return db
    .prepare(sql)
    .raw()
    .all()
    .map((row) => JSON.stringify(row))
    .sort();
}

/** CPU ns of every thread of this process, by thread id (Linux); null elsewhere. */
function threadTimes() {
  try {
    const times = new Map();
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        times.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
      } catch {
        // the thread ended between the listing and the read
      }
    }
    return times;
  } catch {
    return null;
  }
}

/**
 * CPU ms of the main thread, of the threads alive before and after (V8's helpers) and of the rest
 * (threads that came and went: the reader workers), from two {@link threadTimes} and the process
 * total (`process.cpuUsage` deltas include ended threads).
 */
function splitThreads(before, after, totalMs) {
  if (before === null || after === null) return {};
  const main = String(process.pid);
  const delta = (tid) => ((after.get(tid) ?? 0) - (before.get(tid) ?? 0)) / 1e6;
  let helpers = 0;
  for (const tid of before.keys()) if (tid !== main && after.has(tid)) helpers += delta(tid);
  const writer = delta(main);
  return { writerMs: writer, helpersMs: helpers, workersMs: Math.max(0, totalMs - writer - helpers) };
}

async function digest(build, data, withRows, here) {
  const { createHash } = await import('node:crypto');
  const { createRequire } = await import('node:module');
  const Database = createRequire(join(build, 'package.json'))('better-sqlite3');
  const dir = mkdtempSync(join(tmpdir(), 'cairn-digest-'));
  try {
    const { openSqliteStore } = await import(pathToFileURL(join(build, 'dist/store/sqlite/store.js')).href);
    const { createCairn } = await import(pathToFileURL(join(build, 'dist/cairn.js')).href);
    const path = join(dir, 'cairn.db');
    const store = await openSqliteStore(path);
    const { ingestPaths } = await import(pathToFileURL(join(build, 'dist/ingest/runner.js')).href);
    const { createReaderPool } = await import(pathToFileURL(join(build, 'dist/ingest/pool.js')).href);
    const clock = { now: () => 1_800_000_000_000 };
    const cairn = createCairn({ store, actor: 'bench', clock });
    // One file at a time in name order, read by the worker threads as a large ingest is (or, with
    // `--here`, in this thread as a run below the workers' threshold is): which file of a session
    // lands first must not depend on timing, or the hashes would.
    const pool = here ? null : createReaderPool({ size: 2 });
    let summary;
    try {
      const logger = { debug() {}, info() {}, warn() {}, error() {} };
      const reading = pool === null ? { workers: false } : { reader: pool.read };
      summary = await ingestPaths([data], { substrate: cairn.deps.store.substrate, clock, logger, ...reading, concurrency: 1 });
    } finally {
      await pool?.close();
    }
    const sessionIds = (await cairn.deps.store.substrate.listSessions({ limit: 100_000 })).map((s) => s.id).sort();
    const distilled = await cairn.distill({ sessionIds });
    summary.distilled = { errors: distilled.errors.length };
    await store.close();
    const db = new Database(path, { readonly: false });
    // Index terms as stored: every (term, column, offset) of each row, keyed by the row's id.
    const vocab = (table, rows, key) => {
      db.exec(`CREATE VIRTUAL TABLE temp.v_${table} USING fts5vocab(main, ${table}, 'instance')`);
      return canonicalRows(db, `SELECT r.${key}, v.term, v.col, v.offset FROM temp.v_${table} v JOIN ${rows} r ON r.rowid = v.doc`);
    };
    const tables = {
      sessions: canonicalRows(db, 'SELECT * FROM sessions'),
      session_sources: canonicalRows(db, 'SELECT * FROM session_sources'),
      turns: canonicalRows(db, 'SELECT id, session_id, seq, role, text, tool_name, tool_input, tool_use_id, is_error, flags, at, source_uuid, source_line FROM turns'),
      turns_terms: vocab('turns_fts', 'turns', 'id'),
      compactions: canonicalRows(db, 'SELECT * FROM compactions'),
      corrections: canonicalRows(db, 'SELECT * FROM corrections'),
      session_facts: canonicalRows(db, 'SELECT id, session_id, kind, text, path, line FROM session_facts'),
      // One row per occurrence, as session_fact_refs held them before migration 017 packed them
      // into their fact's row: the same digest for builds on either side of it.
      session_fact_refs: canonicalRows(
        db,
        db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'session_fact_refs'").get() !== undefined
          ? 'SELECT fact_id, turn_id, session_id, seq, role, tool_name, at, note FROM session_fact_refs'
          : `SELECT f.id, r.value ->> 0, f.session_id, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4, r.value ->> 5
               FROM session_facts f, json_each(f.refs) r`,
      ),
      session_facts_terms: vocab('session_facts_fts', 'session_facts', 'id'),
      memories: canonicalRows(db, 'SELECT text, kind, scope, project, session, tags, importance, source, provenance, files, valid_to IS NULL, deleted_at IS NULL, content_hash, meta FROM memories'),
      memories_terms: vocab('memories_fts', 'memories', 'content_hash'),
      cursors: canonicalRows(db, 'SELECT path, size, "offset", head_hash, state FROM ingest_cursors'),
    };
    db.close();
    const { seconds, mbPerSecond, workers, ...counts } = summary;
    const sorted = (v) => (Array.isArray(v) ? v.map(sorted) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v);
    tables.summary = [JSON.stringify(sorted(counts))];
    const hash = (rows) => createHash('sha256').update(rows.join('\n')).digest('hex').slice(0, 16);
    const out = { all: hash(Object.values(tables).map(hash)), tables: Object.fromEntries(Object.entries(tables).map(([k, rows]) => [k, `${hash(rows)} (${rows.length})`])) };
    if (withRows) out.rows = tables;
    process.stdout.write(`${JSON.stringify(out, null, withRows ? 0 : 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args[0] === '--digest') {
  await digest(resolve(args[1]), resolve(args[2]), args.includes('--json'), args.includes('--here'));
} else if (args[0] === '--read-one') {
  const [, build, data] = args;
  const dist = (path) => import(pathToFileURL(join(build, 'dist', path)).href);
  const { readWithTerms } = await dist('ingest/pool.js');
  // V8's flags for ingest as the build sets them (builds before tuneJitForIngest: the inlining budget alone).
  const { tuneJitForIngest, limitInliningForIngest } = await dist('ingest/inlining.js').catch(() => ({}));
  const { warmUpReaders } = await dist('ingest/warmup.js').catch(() => ({}));
  (tuneJitForIngest ?? limitInliningForIngest)?.();
  warmUpReaders?.();
  const files = filesUnder(resolve(data));
  const passes = [];
  let facts = 0;
  for (let pass = 0; pass < 3; pass++) {
    const cpu = process.cpuUsage();
    facts = 0;
    for (const path of files) facts += readWithTerms({ path, cursor: null, options: {}, terms: true }, true).batch.facts?.length ?? 0;
    const used = process.cpuUsage(cpu);
    passes.push((used.user + used.system) / 1000);
  }
  process.stdout.write(JSON.stringify({ passes, facts }));
} else if (args[0] === '--write-one') {
  const [, build, data] = args;
  const { serialize, deserialize } = await import('node:v8');
  const dist = (path) => import(pathToFileURL(join(build, 'dist', path)).href);
  const { readWithTerms } = await dist('ingest/pool.js');
  // Builds before seal.ts sent unsealed records (the boundary scanned them in the writer).
  const { adoptReadBatch = () => {}, SEAL_RULESET = null } = await dist('ingest/seal.js').catch(() => ({}));
  const { ingestPaths } = await dist('ingest/runner.js');
  const { openSqliteStore } = await dist('store/sqlite/store.js');
  const { createCairn } = await dist('cairn.js');
  const root = resolve(data);
  // What the workers would post, one message per file (a file of more than 64 MB would be read
  // in several passes by a real run: none of ../shared's is).
  const messages = new Map(filesUnder(root).map((path) => [path, serialize(readWithTerms({ path, cursor: null, options: {}, terms: true }, true))]));
  const dir = mkdtempSync(join(tmpdir(), 'cairn-ab-'));
  try {
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    const cairn = createCairn({ store, actor: 'bench' });
    const reader = async (path) => {
      const message = messages.get(path);
      if (message === undefined) throw new Error(`not pre-read: ${path}`);
      const result = deserialize(message);
      adoptReadBatch(result.batch, SEAL_RULESET);
      return result;
    };
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const main = `/proc/self/task/${process.pid}/schedstat`;
    const threadNs = () => {
      try {
        return Number(readFileSync(main, 'utf8').split(' ')[0]);
      } catch {
        return Number.NaN;
      }
    };
    const before = threadNs();
    const cpu = process.cpuUsage();
    const summary = await ingestPaths([root], { substrate: cairn.deps.store.substrate, clock: { now: () => Date.now() }, logger, reader, concurrency: 4 });
    const used = process.cpuUsage(cpu);
    const writerMs = (threadNs() - before) / 1e6;
    await store.close();
    process.stdout.write(JSON.stringify({ writerMs: Number.isNaN(writerMs) ? (used.user + used.system) / 1000 : writerMs, cpuMs: (used.user + used.system) / 1000, facts: summary.facts ?? 0 }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else if (args[0] === '--writer' || args[0] === '--readers') {
  const writer = args[0] === '--writer';
  const [, data, repsArg, ...builds] = args;
  if (!data || builds.length < 2) {
    console.error(`usage: node scripts/ingest-ab.mjs ${args[0]} <transcripts> <reps> <build A> <build B> [<build C> …]`);
    process.exit(1);
  }
  const reps = Number(repsArg);
  const runs = builds.map(() => []);
  const load = [loadavg()[0]];
  // The builds alternate, each rep starting one further along, one child process a run.
  for (let rep = 0; rep < reps; rep++) {
    for (let k = 0; k < builds.length; k++) {
      const which = (k + rep) % builds.length;
      const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, writer ? '--write-one' : '--read-one', resolve(builds[which]), resolve(data)], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (child.status !== 0) {
        console.error(child.stderr);
        process.exit(1);
      }
      const run = JSON.parse(child.stdout);
      runs[which].push(run);
      const what = writer ? `writer ${Math.round(run.writerMs)} ms CPU (process ${Math.round(run.cpuMs)} ms)` : `reads ${run.passes.map((ms) => Math.round(ms)).join(' / ')} ms CPU`;
      console.error(`rep ${rep + 1} ${builds[which]}: ${what}, ${run.facts} facts`);
    }
    load.push(loadavg()[0]);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const figures = (i) => {
    if (writer) {
      const ms = runs.map((r) => median(r.map((x) => x.writerMs)));
      return { writerMs: Math.round(ms[i]), writerRatio: +(ms[i] / ms[0]).toFixed(3) };
    }
    const cold = runs.map((r) => median(r.map((x) => x.passes[0])));
    const warm = runs.map((r) => median(r.flatMap((x) => x.passes.slice(1))));
    return { coldMs: Math.round(cold[i]), warmMs: Math.round(warm[i]), coldRatio: +(cold[i] / cold[0]).toFixed(3), warmRatio: +(warm[i] / warm[0]).toFixed(3) };
  };
  console.log(JSON.stringify({ reps, builds: builds.map((b, i) => ({ build: b, ...figures(i), facts: runs[i][0].facts })), load1: load.map((l) => +l.toFixed(2)) }));
} else if (args[0] === '--one') {
  const [, build, data] = args;
  const dir = mkdtempSync(join(tmpdir(), 'cairn-ab-'));
  try {
    const { openSqliteStore } = await import(pathToFileURL(join(build, 'dist/store/sqlite/store.js')).href);
    const { createCairn } = await import(pathToFileURL(join(build, 'dist/cairn.js')).href);
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    const cairn = createCairn({ store, actor: 'bench' });
    const threadsBefore = threadTimes();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const summary = await cairn.ingest([data], { distill: false });
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    const threads = splitThreads(threadsBefore, threadTimes(), cpuMs);
    const stats = await store.substrate?.substrateStats();
    await store.close();
    process.stdout.write(JSON.stringify({ ms, cpuMs, ...threads, bytes: summary.bytes, turns: stats?.turns ?? 0, facts: summary.facts ?? 0, workers: summary.workers }));
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
  const files = filesUnder(resolve(data));
  const bare = [];
  for (let rep = 0; rep < reps; rep++) {
    bare.push(bareLoop(files));
    for (let k = 0; k < builds.length; k++) {
      const which = (k + rep) % builds.length;
      const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--one', resolve(builds[which]), resolve(data)], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (child.status !== 0) {
        console.error(child.stderr);
        process.exit(1);
      }
      const run = JSON.parse(child.stdout);
      runs[which].push(run);
      const split = run.writerMs === undefined ? '' : ` (writer ${Math.round(run.writerMs)} ms, workers ${Math.round(run.workersMs)} ms, V8 helpers ${Math.round(run.helpersMs)} ms)`;
      console.error(`rep ${rep + 1} ${builds[which]}: ${(run.bytes / 1e6 / (run.ms / 1000)).toFixed(1)} MB/s wall, ${(run.bytes / 1e6 / (run.cpuMs / 1000)).toFixed(1)} MB/s CPU${split}, ${run.turns} turns, ${run.facts} facts`);
    }
    load.push(loadavg()[0]);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const threadMedians = (r) =>
    r[0].writerMs === undefined ? {} : Object.fromEntries(['writerMs', 'workersMs', 'helpersMs'].map((k) => [k, Math.round(median(r.map((x) => x[k])))]));
  const wall = runs.map((r) => median(r.map((x) => x.bytes / 1e6 / (x.ms / 1000))));
  const cpu = runs.map((r) => median(r.map((x) => x.bytes / 1e6 / (x.cpuMs / 1000))));
  const bareMbS = median(bare);
  console.log(
    JSON.stringify({
      reps,
      builds: builds.map((b, i) => ({ build: b, wallMbS: +wall[i].toFixed(1), cpuMbS: +cpu[i].toFixed(1), wallRatio: +(wall[i] / wall[0]).toFixed(3), cpuRatio: +(cpu[i] / cpu[0]).toFixed(3), cpuPerBare: +(cpu[i] / bareMbS).toFixed(4), ...threadMedians(runs[i]), turns: runs[i][0].turns, facts: runs[i][0].facts })),
      bareMbS: +bareMbS.toFixed(1),
      load1: load.map((l) => +l.toFixed(2)),
    }),
  );
}
