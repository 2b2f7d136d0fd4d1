import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type Database from 'better-sqlite3';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReaderPool, readWithTerms } from '../../src/ingest/pool.js';
import type { IngestSummary } from '../../src/ingest/runner.js';
import { WORKER_BYTES, WORKERS_MIN_BYTES } from '../../src/ingest/schedule.js';
import type { SqliteSubstrate } from '../../src/store/sqlite/substrate.js';
import { claudeMain, fixtures, ingest, openSubstrate, repoRoot, tempDir } from './helpers.js';

// Tests run from TypeScript sources, where there is no built worker.js: bundle worker.ts once,
// and build the misbehaving workers as small wrappers around that bundle.
const dir = tempDir('cairn-pool-');
let worker: URL;
/** A worker that exits (like a crash or an out-of-memory kill) when asked for a path containing `needle`. */
let crashOn: (needle: string) => URL;
/** A worker that answers with an error for a path containing `needle` (a reader that threw). */
let failOn: (needle: string) => URL;

beforeAll(async () => {
  const outfile = join(dir, 'worker.mjs');
  await build({ entryPoints: [join(repoRoot, 'src/ingest/worker.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile, logLevel: 'silent' });
  worker = pathToFileURL(outfile);
  let n = 0;
  const wrapper = (body: string): URL => {
    const path = join(dir, `wrapper-${n++}.mjs`);
    writeFileSync(path, `import { parentPort } from 'node:worker_threads';\n${body}\nawait import(${JSON.stringify(worker.href)});\n`);
    return pathToFileURL(path);
  };
  crashOn = (needle) => wrapper(`parentPort.on('message', (r) => { if (r.path.includes(${JSON.stringify(needle)})) process.exit(3); });`);
  failOn = (needle) =>
    wrapper(`parentPort.on('message', (r) => { if (r.path.includes(${JSON.stringify(needle)})) parentPort.postMessage({ type: 'error', id: r.id, error: 'reader blew up' }); });`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Everything a substrate holds, comparable across databases (rowids aside). */
async function contents(substrate: SqliteSubstrate, db: Database.Database) {
  const sessions = (await substrate.listSessions({ limit: 10_000 })).sort((a, b) => a.id.localeCompare(b.id));
  const turns = [];
  const compactions = [];
  for (const session of sessions) {
    turns.push(...(await substrate.getTurns(session.id)));
    compactions.push(...(await substrate.getCompactions(session.id)));
  }
  db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.turns_vocab USING fts5vocab(main, turns_fts, instance)');
  const index = db
    .prepare<[], { id: string; term: string; offset: number }>('SELECT t.id, v.term, v.offset FROM temp.turns_vocab v JOIN turns t ON t.pk = v.doc')
    .all()
    .map((r) => `${r.id} ${r.term} ${r.offset}`)
    .sort();
  const cursors = (await substrate.listCursors()).map((c) => ({ ...c, updatedAt: 0 })).sort((a, b) => a.path.localeCompare(b.path));
  return { sessions, turns: turns.sort((a, b) => a.id.localeCompare(b.id)), compactions, corrections: await substrate.getCorrections({}), index, cursors };
}

const timeless = (s: IngestSummary) => ({ ...s, seconds: 0, mbPerSecond: 0, workers: 0, badLineSamples: [...s.badLineSamples].sort((a, b) => `${a.path}${a.line}`.localeCompare(`${b.path}${b.line}`)) });

async function inProcess(paths: string[], read?: { maxBytes: number }) {
  const run = openSubstrate();
  const summary = await ingest(paths, run.substrate, { workers: false, ...(read ? { read } : {}) });
  const held = await contents(run.substrate, run.db);
  run.close();
  return { summary, held };
}

describe('ingest worker pool', () => {
  it('stores exactly what reading in this thread stores: sessions, turns, index, cursors, summary', async () => {
    const expected = await inProcess([fixtures]);
    const run = openSubstrate();
    const summary = await ingest([fixtures], run.substrate, { workers: { minBytes: 0, size: 2, url: worker } });
    expect(summary.workers).toBe(2);
    const held = await contents(run.substrate, run.db);
    expect(held.index.length).toBeGreaterThan(500);
    expect(held).toEqual(expected.held);
    expect(timeless(summary)).toEqual(timeless(expected.summary));
    // The unchanged set is then skipped by its stat alone.
    expect(await ingest([fixtures], run.substrate, { workers: { minBytes: 0, url: worker } })).toMatchObject({ filesChanged: 0, turns: 0, bytes: 0, workers: 0 });
    run.close();
  });

  it('gives the same result when files are read in many small passes across workers', async () => {
    const expected = await inProcess([fixtures], { maxBytes: 1_500 });
    const run = openSubstrate();
    const summary = await ingest([fixtures], run.substrate, { workers: { minBytes: 0, size: 3, url: worker }, read: { maxBytes: 1_500 } });
    expect(await contents(run.substrate, run.db)).toEqual(expected.held);
    expect(timeless(summary)).toEqual(timeless(expected.summary));
    run.close();
  });

  it('starts one worker per `minBytes` of changed bytes, up to the cores (each worker compiles the readers again)', async () => {
    const first = openSubstrate();
    const { bytes } = await ingest([fixtures], first.substrate, { workers: false });
    first.close();
    const workersFor = async (minBytes: number): Promise<number> => {
      const run = openSubstrate();
      const summary = await ingest([fixtures], run.substrate, { workers: { minBytes, url: worker } });
      run.close();
      return summary.workers;
    };
    expect(await workersFor(Math.floor(bytes * 0.6))).toBe(1);
    expect(await workersFor(Math.floor(bytes / 2))).toBe(Math.min(2, availableParallelism()));
    expect(await workersFor(bytes + 1)).toBe(0);
  });

  it('sizes the pool by `bytesPerWorker` once `minBytes` is reached (by default two workers at the threshold on two cores)', async () => {
    const first = openSubstrate();
    const { bytes } = await ingest([fixtures], first.substrate, { workers: false });
    first.close();
    const workersFor = async (options: { minBytes: number; bytesPerWorker: number }): Promise<number> => {
      const run = openSubstrate();
      const summary = await ingest([fixtures], run.substrate, { workers: { ...options, url: worker } });
      run.close();
      return summary.workers;
    };
    expect(await workersFor({ minBytes: bytes, bytesPerWorker: Math.floor(bytes / 2) })).toBe(Math.min(2, availableParallelism()));
    expect(await workersFor({ minBytes: Math.floor(bytes / 2), bytesPerWorker: bytes })).toBe(1);
    expect(await workersFor({ minBytes: bytes + 1, bytesPerWorker: 1 })).toBe(0);
    expect(WORKERS_MIN_BYTES).toBeGreaterThanOrEqual(2 * WORKER_BYTES);
  });

  it('stays in this thread for a small run (a hook ingesting one transcript)', async () => {
    const run = openSubstrate();
    const summary = await ingest([claudeMain], run.substrate, { workers: { url: worker } });
    expect(summary.workers).toBe(0);
    expect(summary.turns).toBeGreaterThan(0);
    run.close();
  });

  it('reads here when no worker script exists (running from sources)', async () => {
    const run = openSubstrate();
    const summary = await ingest([fixtures], run.substrate, { workers: { minBytes: 0, url: pathToFileURL(join(dir, 'missing.js')) } });
    expect(summary.workers).toBe(0);
    expect(summary.filesChanged).toBe(11);
    run.close();
  });

  it('loses nothing when a worker dies mid-run: its file is read here and the worker replaced', async () => {
    const expected = await inProcess([fixtures]);
    const run = openSubstrate();
    const summary = await ingest([fixtures], run.substrate, { workers: { minBytes: 0, size: 2, url: crashOn('rollout-') } });
    expect(await contents(run.substrate, run.db)).toEqual(expected.held);
    expect(timeless(summary)).toEqual(timeless(expected.summary));
    run.close();

    const pool = createReaderPool({ size: 2, workerUrl: crashOn('agent-') });
    try {
      const paths = [claudeMain, join(fixtures, 'claude-code/projects/-home-dev-my-app/agent-9f8e7d6c.jsonl'), claudeMain, claudeMain];
      const results = await Promise.all(paths.map((path) => pool.read(path, null, { now: 1 })));
      for (const [i, result] of results.entries()) expect(result).toEqual(readWithTerms({ path: paths[i] as string, cursor: null, options: { now: 1 }, terms: true }));
      expect(pool.stats()).toMatchObject({ died: 1 });
      expect(pool.stats().readsHere).toBeGreaterThanOrEqual(1);
      expect(pool.stats().started).toBeGreaterThanOrEqual(3);
    } finally {
      await pool.close();
    }
  });

  it('reads everything here when no worker can start, without hanging', async () => {
    const broken = join(dir, 'broken.mjs');
    writeFileSync(broken, "throw new Error('cannot load');\n");
    const pool = createReaderPool({ size: 2, workerUrl: pathToFileURL(broken) });
    try {
      const results = await Promise.all([pool.read(claudeMain, null, { now: 1 }), pool.read(claudeMain, null, { now: 1 }), pool.read(claudeMain, null, { now: 1 })]);
      expect(results.every((r) => r.batch.turns.length > 0 && r.batch.turns.every((t) => typeof t.terms === 'string'))).toBe(true);
      expect(pool.stats()).toMatchObject({ started: 2, died: 2, readsHere: 3 });
    } finally {
      await pool.close();
    }
  });

  it('reports a file whose reader threw in a worker, keeps its cursor, and takes it in on the next run', async () => {
    const expected = await inProcess([fixtures]);
    const run = openSubstrate();
    const first = await ingest([fixtures], run.substrate, { workers: { minBytes: 0, size: 2, url: failOn('agent-9f8e7d6c') } });
    expect(first.skippedSamples).toEqual([{ path: expect.stringContaining('agent-9f8e7d6c.jsonl'), reason: 'error: reader blew up' }]);
    expect(first.filesChanged).toBe(10);
    expect(await run.substrate.getCursor(join(fixtures, 'claude-code/projects/-home-dev-my-app/agent-9f8e7d6c.jsonl'))).toBeNull();
    const second = await ingest([fixtures], run.substrate, { workers: false });
    expect(second.filesChanged).toBe(1);
    expect(await contents(run.substrate, run.db)).toEqual(expected.held);
    run.close();
  });

  it('counts the reads asked for and not yet answered', async () => {
    const pool = createReaderPool({ size: 1, workerUrl: worker });
    try {
      expect(pool.pending()).toBe(0);
      const reads = [pool.read(claudeMain, null, {}), pool.read(join(fixtures, 'generic/agent-log.jsonl'), null, {})];
      expect(pool.pending()).toBe(2);
      await reads[0];
      expect(pool.pending()).toBeLessThanOrEqual(1);
      await reads[1];
      expect(pool.pending()).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('rejects reads after close and closes twice without error', async () => {
    const pool = createReaderPool({ size: 1, workerUrl: worker });
    await pool.close();
    await pool.close();
    await expect(pool.read(claudeMain, null, {})).rejects.toThrow('reader pool closed');
  });
});

describe('what bulk ingest relies on in the SQLite substrate', () => {
  it('commits batches written in the same tick together, yet a refused batch fails alone', async () => {
    const run = openSubstrate();
    const [a, b, c] = [claudeMain, join(fixtures, 'claude-code/projects/-home-dev-my-app/agent-9f8e7d6c.jsonl'), join(fixtures, 'generic/agent-log.jsonl')].map(
      (path) => readWithTerms({ path, cursor: null, options: { now: 1 }, terms: false }).batch,
    );
    const broken = structuredClone(b!);
    (broken.turns[0] as { role: unknown }).role = null; // NOT NULL: the store refuses this batch
    const outcomes = await Promise.allSettled([a!, broken, c!].map((batch) => run.substrate.writeSubstrate(batch)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await run.substrate.substrateStats()).turns).toBe(a!.turns.length + c!.turns.length);
    expect(await run.substrate.getCursor(b!.cursor!.path)).toBeNull();
    run.close();
  });

  it("loads a cursor's state only when read, and never a state another writer moved on since", async () => {
    const run = openSubstrate();
    const first = readWithTerms({ path: claudeMain, cursor: null, options: { now: 1, maxBytes: 2_000 }, terms: false });
    await run.substrate.writeSubstrate(first.batch);
    const fresh = await run.substrate.getCursor(claudeMain);
    expect(fresh).toEqual(first.batch.cursor);
    const stale = await run.substrate.getCursor(claudeMain);
    const second = readWithTerms({ path: claudeMain, cursor: fresh, options: { now: 2, maxBytes: 2_000 }, terms: false });
    await run.substrate.writeSubstrate(second.batch);
    // Read after the row moved on: empty, so a reader would start the file again (idempotent).
    expect(stale?.state).toEqual({});
    expect(stale?.offset).toBe(first.batch.cursor?.offset);
    expect(await run.substrate.getCursor(claudeMain)).toEqual(second.batch.cursor);
    run.close();
  });
});
