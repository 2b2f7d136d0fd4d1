/**
 * The store's write thread (SqliteSubstrate.startWriteThread, src/store/sqlite/substrate-writer*.ts)
 * under the ingest runner: what it stores, its errors, a dying thread, a second writer meanwhile,
 * and what the calling thread's store answers afterwards.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type Database from 'better-sqlite3';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { recordingSubstrate } from '../../src/distill/after-ingest.js';
import { ingestPaths, type IngestDeps, type IngestSummary } from '../../src/ingest/runner.js';
import { gatheredWrites, startWriteThread } from '../../src/ingest/schedule.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { SqliteSubstrate } from '../../src/store/sqlite/substrate.js';
import type { SubstrateBatch, SubstrateStore } from '../../src/types.js';
import { claudeMain, fixtures, ingest, openSubstrate, repoRoot, silentLogger, tempDir } from './helpers.js';

// Tests run from TypeScript sources, where there is no built worker script: bundle it once, inside
// the repository so that better-sqlite3 (left out of the bundle) resolves from node_modules.
const bundles = tempDir('cairn-writer-');
const local = join(repoRoot, 'node_modules', `.cairn-writer-test-${process.pid}`);
let writer: URL;
/** The worker, exiting (a crash, an out-of-memory kill) right after it has committed its `nth` group. */
let exitOnGroup: (nth: number) => URL;
/** The worker, throwing an uncaught error right after it has committed its `nth` group. */
let throwOnGroup: (nth: number) => URL;

beforeAll(async () => {
  mkdirSync(local, { recursive: true });
  const outfile = join(local, 'substrate-writer-worker.mjs');
  await build({
    entryPoints: [join(repoRoot, 'src/store/sqlite/substrate-writer-worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    external: ['better-sqlite3'],
    // The bundle's own `require` for better-sqlite3's CommonJS.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'silent',
  });
  writer = pathToFileURL(outfile);
  let n = 0;
  exitOnGroup = (nth) => {
    const path = join(local, `exit-${n++}.mjs`);
    writeFileSync(
      path,
      // The worker's own listener first (it takes the messages posted before it loads), then this one.
      `import { parentPort } from 'node:worker_threads';\nawait import(${JSON.stringify(writer.href)});\nlet groups = 0;\nparentPort.on('message', (r) => { if (r.type === 'write' && ++groups === ${nth}) process.exit(3); });\n`,
    );
    return pathToFileURL(path);
  };
  throwOnGroup = (nth) => {
    const path = join(local, `throw-${n++}.mjs`);
    writeFileSync(
      path,
      `import { parentPort } from 'node:worker_threads';\nawait import(${JSON.stringify(writer.href)});\nlet groups = 0;\nparentPort.on('message', (r) => { if (r.type === 'write' && ++groups === ${nth}) throw new Error('planted failure'); });\n`,
    );
    return pathToFileURL(path);
  };
});
afterAll(() => {
  rmSync(bundles, { recursive: true, force: true });
  rmSync(local, { recursive: true, force: true });
});

/** Everything a substrate holds, comparable across databases (rowids aside). */
async function contents(substrate: SqliteSubstrate, db: Database.Database) {
  const sessions = (await substrate.listSessions({ limit: 10_000 })).sort((a, b) => a.id.localeCompare(b.id));
  const turns = [];
  const compactions = [];
  for (const session of sessions) {
    turns.push(...(await substrate.getTurns(session.id)));
    compactions.push(...(await substrate.getCompactions(session.id)));
  }
  const vocab = (table: string, rows: string) => {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_${table} USING fts5vocab(main, ${table}, instance)`);
    return db
      .prepare<[], { id: string; term: string; offset: number }>(`SELECT r.id, v.term, v.offset FROM temp.v_${table} v JOIN ${rows} r ON r.pk = v.doc`)
      .all()
      .map((r) => `${r.id} ${r.term} ${r.offset}`)
      .sort();
  };
  const facts = db.prepare('SELECT id, session_id, kind, text, path, line, refs FROM session_facts').raw().all().map((r) => JSON.stringify(r)).sort();
  const cursors = (await substrate.listCursors()).map((c) => ({ ...c, updatedAt: 0 })).sort((a, b) => a.path.localeCompare(b.path));
  return {
    sessions,
    turns: turns.sort((a, b) => a.id.localeCompare(b.id)),
    compactions,
    corrections: await substrate.getCorrections({}),
    turnTerms: vocab('turns_fts', 'turns'),
    facts,
    factTerms: vocab('session_facts_fts', 'session_facts'),
    cursors,
  };
}

const timeless = (s: IngestSummary) => ({
  ...s,
  seconds: 0,
  mbPerSecond: 0,
  writeThread: false,
  badLineSamples: [...s.badLineSamples].sort((a, b) => `${a.path}${a.line}`.localeCompare(`${b.path}${b.line}`)),
});

async function inThread(paths: string[], extra: Partial<IngestDeps> = {}) {
  const run = openSubstrate();
  const summary = await ingest(paths, run.substrate, { workers: false, writeThread: false, ...extra });
  const held = await contents(run.substrate, run.db);
  run.close();
  return { summary, held };
}

/** The fixtures and a copy of the main Claude Code session with `marker` in a user message. */
function withMarked(marker: string): { dir: string; marked: string } {
  const dir = tempDir('cairn-writer-data-');
  cpSync(fixtures, join(dir, 'fixtures'), { recursive: true });
  const lines = readFileSync(claudeMain, 'utf8').split('\n');
  const marked = join(dir, 'marked', 'marked.jsonl');
  mkdirSync(join(dir, 'marked'), { recursive: true });
  const session = '99999999-2222-4333-8444-555555555555';
  const extra = JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/my_app',
    sessionId: session,
    version: '2.1.9',
    uuid: 'u-marked',
    timestamp: '2026-01-10T11:00:00.000Z',
    type: 'user',
    message: { role: 'user', content: `Please keep ${marker} in mind from now on` },
  });
  const copied = lines.filter((line) => line.length > 0).map((line) => line.replaceAll('11111111-2222-4333-8444-555555555555', session));
  writeFileSync(marked, `${[...copied, extra].join('\n')}\n`);
  return { dir, marked };
}

describe('the store write thread', () => {
  it('stores exactly what writing in this thread stores: rows, index terms, facts, cursors, summary', async () => {
    const expected = await inThread([fixtures]);
    const run = openSubstrate();
    const summary = await ingest([fixtures], run.substrate, { workers: false, writeThread: { minBytes: 0, url: writer } });
    expect(summary.writeThread).toBe(true);
    const held = await contents(run.substrate, run.db);
    expect(held.turnTerms.length).toBeGreaterThan(500);
    expect(held.facts.length).toBeGreaterThan(20);
    expect(held).toEqual(expected.held);
    expect(timeless(summary)).toEqual(timeless(expected.summary));
    // An unchanged re-run writes nothing (and starts no thread: nothing changed).
    expect(await ingest([fixtures], run.substrate, { workers: false, writeThread: { minBytes: 0, url: writer } })).toMatchObject({
      filesChanged: 0,
      turns: 0,
      bytes: 0,
      writeThread: false,
    });
    // After the thread is closed, writes commit in this thread again.
    expect(await run.substrate.writeSubstrate({ sessions: [], turns: [], compactions: [], corrections: [], cursor: null })).toEqual({ turnsAdded: 0 });
    run.close();
  });

  it('files read in several passes, and lanes of one file at a time, store the same', async () => {
    const read = { maxBytes: 2048 };
    const expected = await inThread([fixtures], { read });
    const run = openSubstrate();
    const summary = await ingest([fixtures], run.substrate, { workers: false, read, concurrency: 1, writeThread: { minBytes: 0, url: writer } });
    expect(summary.writeThread).toBe(true);
    expect(await contents(run.substrate, run.db)).toEqual(expected.held);
    expect(timeless(summary)).toEqual(timeless(expected.summary));
    run.close();
  });

  it('a batch the store refuses fails its own file only, which keeps its cursor and is read again next run', async () => {
    const { dir, marked } = withMarked('REFUSE-THIS-TURN');
    const run = openSubstrate();
    // A constraint only the thread's connection meets: it refuses one file's batch.
    run.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON turns WHEN NEW.text LIKE '%REFUSE-THIS-TURN%' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    const summary = await ingest([dir], run.substrate, { workers: false, writeThread: { minBytes: 0, url: writer } });
    expect(summary.writeThread).toBe(true);
    expect(summary.skippedSamples).toEqual([{ path: marked, reason: 'error: refused by the test' }]);
    expect(await run.substrate.getCursor(marked)).toBeNull();
    // Every other file is stored whole, as a run without the marked file stores it.
    const others = await inThread([join(dir, 'fixtures')]);
    const held = await contents(run.substrate, run.db);
    expect(held.turns).toEqual(others.held.turns);
    expect(held.cursors.map((c) => c.path.replace(dir, ''))).toEqual(others.held.cursors.map((c) => c.path.replace(join(dir, 'fixtures'), '/fixtures')));
    // Next run, allowed: only the refused file is read, and the store then holds everything.
    run.db.exec('DROP TRIGGER refuse');
    const again = await ingest([dir], run.substrate, { workers: false, writeThread: { minBytes: 0, url: writer } });
    expect(again.filesChanged).toBe(1);
    expect(again.turns).toBeGreaterThan(0);
    expect((await run.substrate.getCursor(marked))?.offset).toBe(readFileSync(marked).length);
    run.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a thread that dies fails the files not yet committed with one line, never hangs, and the next run completes the store', async () => {
    const expected = await inThread([fixtures]);
    const run = openSubstrate();
    // Groups of one file each (one lane): the thread dies once it has committed the third.
    const summary = await ingest([fixtures], run.substrate, { workers: false, concurrency: 1, writeThread: { minBytes: 0, url: exitOnGroup(3) } });
    expect(summary.writeThread).toBe(true);
    expect(summary.skipped).toBeGreaterThan(0);
    for (const { reason } of summary.skippedSamples) {
      expect(reason).toBe("error: the store's write thread stopped (exit code 3) before committing this file; it is read again next run");
    }
    const dead = summary.skippedSamples.map((s) => s.path);
    for (const path of dead) expect(await run.substrate.getCursor(path)).toBeNull();
    // What was committed before it died stays: three files, each with its cursor.
    expect((await run.substrate.listCursors()).length).toBe(3);
    expect(summary.filesChanged).toBe(3);
    const again = await ingest([fixtures], run.substrate, { workers: false, writeThread: { minBytes: 0, url: writer } });
    expect(again.skipped).toBe(0);
    expect(again.filesChanged).toBe(dead.length);
    expect(await contents(run.substrate, run.db)).toEqual(expected.held);
    run.close();
  }, 30_000);

  it('a thread that throws fails the files not yet committed with its error, and the run returns', async () => {
    const run = openSubstrate();
    const summary = await ingest([fixtures], run.substrate, { workers: false, concurrency: 1, writeThread: { minBytes: 0, url: throwOnGroup(2) } });
    expect(summary.writeThread).toBe(true);
    expect(summary.skipped).toBeGreaterThan(0);
    expect(new Set(summary.skippedSamples.map((s) => s.reason))).toEqual(new Set(["error: the store's write thread failed: planted failure"]));
    expect(summary.filesChanged).toBe(2);
    expect((await run.substrate.listCursors()).length).toBe(2);
    run.close();
  }, 30_000);

  it('a batch that cannot cross to the thread is refused on its own; a database the thread cannot open fails the writes, never hangs', async () => {
    const run = openSubstrate();
    const thread = run.substrate.startWriteThread({ url: writer });
    expect(thread).not.toBeNull();
    const empty = { sessions: [], turns: [], compactions: [], corrections: [], cursor: null };
    const unclonable = { ...empty, corrections: [{ id: 'c', kind: () => 'not data' }] } as unknown as SubstrateBatch;
    await expect(run.substrate.writeSubstrate(unclonable)).rejects.toThrow(/could not be cloned/);
    expect(await run.substrate.writeSubstrate(empty)).toEqual({ turnsAdded: 0 });
    await thread?.close();
    run.close();
    // The file gone under the thread's feet: its connection cannot be opened.
    const gone = openSubstrate();
    const path = gone.db.name;
    gone.db.close();
    rmSync(path, { force: true });
    const { createSqliteSubstrate } = await import('../../src/store/sqlite/substrate.js');
    const { default: BetterSqlite3 } = await import('better-sqlite3');
    const readonlyDir = tempDir();
    const db = new BetterSqlite3(join(readonlyDir, 'x.db'));
    db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/002_substrate.sql'), 'utf8'));
    db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/007_session_facts.sql'), 'utf8'));
    db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/011_fact_refs_one_index.sql'), 'utf8'));
    db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/017_fact_refs_packed.sql'), 'utf8'));
    const substrate = createSqliteSubstrate(db);
    // A directory where the file should be: the thread's open fails.
    rmSync(join(readonlyDir, 'x.db'));
    mkdirSync(join(readonlyDir, 'x.db'));
    const failing = substrate.startWriteThread({ url: writer });
    expect(failing).not.toBeNull();
    await expect(substrate.writeSubstrate(empty)).rejects.toThrow(/the store's write thread stopped: cannot open/);
    await failing?.close();
    db.close();
    rmSync(readonlyDir, { recursive: true, force: true });
  }, 30_000);

  it('another writer on the same store meanwhile succeeds (busy timeout), and the ingest stores everything', async () => {
    const dir = tempDir();
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    const cairn = createCairn({ store, actor: 'test', clock: { now: () => 1_800_000_000_000 } });
    const substrate = recordingSubstrate(cairn.deps.store.substrate as SubstrateStore, new Set());
    let remembered = 0;
    let ingesting = true;
    const ingestRun = ingestPaths([fixtures], { substrate, clock: { now: () => 1_800_000_000_000 }, logger: silentLogger, workers: false, writeThread: { minBytes: 0, url: writer } });
    const remembering = (async () => {
      for (let i = 0; ingesting || i < 5; i++) {
        await cairn.remember({ text: `while ingesting: the build uses esbuild ${i} for the hooks bundle` });
        remembered++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const summary = await ingestRun.finally(() => (ingesting = false));
    await remembering;
    expect(summary.writeThread).toBe(true);
    expect(summary.skipped).toBe(0);
    expect(remembered).toBeGreaterThanOrEqual(5);
    expect(await store.countMemories({})).toBe(remembered);
    const expected = await inThread([fixtures]);
    expect((await store.substrate.substrateStats()).turns).toBe(expected.held.turns.length);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it("after a threaded run the calling thread's store answers reads as after an in-thread one", async () => {
    const answers = async (thread: boolean) => {
      const dir = tempDir();
      const store = await openSqliteStore(join(dir, 'cairn.db'));
      const cairn = createCairn({ store, actor: 'test', clock: { now: () => 1_800_000_000_000 } });
      const substrate = cairn.deps.store.substrate as SubstrateStore;
      // Read before the run too, so anything this connection keeps from the reads would show.
      const before = [await substrate.substrateStats(), await substrate.searchFacts('src', { limit: 5 }), await substrate.getCursor(claudeMain)];
      const summary = await ingestPaths([fixtures], {
        substrate: recordingSubstrate(substrate, new Set()),
        clock: { now: () => 1_800_000_000_000 },
        logger: silentLogger,
        workers: false,
        writeThread: thread ? { minBytes: 0, url: writer } : false,
      });
      expect(summary.writeThread).toBe(thread);
      const cursor = await substrate.getCursor(claudeMain);
      const after = {
        before,
        stats: { ...(await substrate.substrateStats()), lastIngestAt: 0 },
        cursor: cursor === null ? null : { ...cursor, updatedAt: 0 },
        facts: (await substrate.searchFacts('tokenizer', { limit: 20 })).map((hit) => ({ ...hit, score: Math.round(hit.score * 1e6) })),
        sessionFacts: await substrate.listFacts((await substrate.listSessions({ limit: 1 }))[0]?.id ?? ''),
        turns: await substrate.searchTurns('test', { limit: 10 }),
        sessions: await substrate.listSessions({ limit: 100 }),
      };
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      return after;
    };
    const here = await answers(false);
    const there = await answers(true);
    expect(there.stats.turns).toBeGreaterThan(0);
    expect(there.cursor).not.toBeNull();
    expect(here.facts.length).toBeGreaterThan(0);
    expect(there).toEqual(here);
  }, 30_000);

  it('is not started for a store that cannot, nor when told not to, nor below its threshold', async () => {
    const memory = openSubstrate();
    expect(startWriteThread(memory.substrate, false, silentLogger, 1 << 30)).toBeNull();
    expect(startWriteThread(memory.substrate, { minBytes: 1000, url: writer }, silentLogger, 999)).toBeNull();
    expect(startWriteThread({} as SubstrateStore, { minBytes: 0 }, silentLogger, 1 << 30)).toBeNull();
    // No built script (running from sources): null, and the run writes here.
    expect(startWriteThread(memory.substrate, { minBytes: 0, url: pathToFileURL(join(bundles, 'missing.js')) }, silentLogger, 1 << 30)).toBeNull();
    const summary = await ingest([fixtures], memory.substrate, { workers: false, writeThread: { minBytes: 0, url: pathToFileURL(join(bundles, 'missing.js')) } });
    expect(summary.writeThread).toBe(false);
    expect(summary.turns).toBeGreaterThan(0);
    memory.close();
    // Another connection to an in-memory database would see another database.
    const inMemory = await openSqliteStore(':memory:');
    expect(inMemory.substrate.startWriteThread({ url: writer })).toBeNull();
    await inMemory.close();
  });
});

describe('gatheredWrites with a group size', () => {
  it('hands a group over as soon as it holds that many batches, and the rest when no lane reads', async () => {
    const written: string[][] = [];
    let tick: string[] = [];
    const substrate = {
      writeSubstrate: async (batch: SubstrateBatch) => {
        if (tick.length === 0) queueMicrotask(() => (written.push(tick), (tick = [])));
        tick.push(batch.sessions[0]?.id ?? '?');
        return { turnsAdded: 0 };
      },
    } as unknown as SubstrateStore;
    let reading = 5;
    const write = gatheredWrites(substrate, 60_000, () => reading, 2);
    const b = (id: string) => ({ sessions: [{ id }], turns: [], compactions: [], corrections: [], cursor: null }) as unknown as SubstrateBatch;
    const all = [write(b('a')), write(b('b')), write(b('c'))];
    await new Promise((r) => setImmediate(r));
    expect(written).toEqual([['a', 'b']]);
    reading = 0;
    write.poke();
    await Promise.all(all);
    expect(written).toEqual([['a', 'b'], ['c']]);
  });
});
