import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { filterSql } from '../../src/store/sqlite/rows.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { BACKFILL_KEY, FOLD_AT_ROWS, TextSearchIndex } from '../../src/store/sqlite/text-search-index.js';
import { queryTerms } from '../../src/store/tokenize.js';
import type { MemoryFilter } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';

const repo = resolve(import.meta.dirname, '../..');
const dir = tempDir('cairn-bm25-index-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clock = { now: () => Date.UTC(2026, 0, 1) };
const WORDS = [
  'parser', 'parsers', 'parsing', 'config', 'deploy', 'deploys', 'token', 'tokens', 'cache', 'retry', 'timeout',
  'postgres', 'sqlite', 'worker', 'queue', 'schema', 'migration', 'index', 'vector', 'bundle', 'café', 'naïve',
  'über', 'Straße', '東京タワー', 'résumé', 'src/config.ts:42', 'parseConfig', 'snake_case_name', 'v2.1.0',
];

/** A seeded choice of words (mulberry32), so every run writes the same memories. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function text(next: () => number, i: number): string {
  const n = 3 + Math.floor(next() * 9);
  const words: string[] = [];
  for (let k = 0; k < n; k++) words.push(WORDS[Math.floor(next() * WORDS.length)] as string);
  return `${words.join(' ')} note${i}`;
}

/** What FTS5 alone ranks for a search (the store's MATCH over a small index: every query term). */
function fts5(store: SqliteStore, query: string, filter: MemoryFilter, limit: number): Array<{ id: string; score: number }> {
  const terms = queryTerms(query, 64).slice(0, 32);
  if (terms.length === 0) return [];
  const match = terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
  const { where, params } = filterSql(filter);
  return store.db
    .prepare(
      `SELECT m.id AS id, -f.rank AS score FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
        WHERE memories_fts MATCH ? AND ${where} ORDER BY f.rank LIMIT ?`,
    )
    .all(match, ...params, limit) as Array<{ id: string; score: number }>;
}

const QUERIES = ['parser config', 'deploy tokens retry', 'café naive', 'Straße über', '東京', 'src/config.ts:42', 'parseConfig cache', 'snake_case_name worker', 'note7 note70 queue', 'résumé v2.1.0 index'];

async function expectSameAsFts5(store: SqliteStore, filters: MemoryFilter[] = [{}, { project: 'p1' }, { project: 'p2' }], answered = true): Promise<void> {
  // The index itself answers these queries (searchText would otherwise be FTS5's, equal by construction).
  const index = new TextSearchIndex(() => store.db);
  for (const query of QUERIES) expect(index.search(queryTerms(query, 64).slice(0, 32), 10, () => new Map()) !== null).toBe(answered);
  for (const filter of filters) {
    for (const query of QUERIES) {
      for (const limit of [1, 5, 50]) {
        const ours = await store.searchText(query, { ...filter, limit });
        expect({ query, filter, limit, hits: ours }).toEqual({ query, filter, limit, hits: fts5(store, query, filter, limit) });
      }
    }
  }
}

/** The postings as stored, after folding what is pending. */
function postings(store: SqliteStore): unknown[] {
  const index = new TextSearchIndex(() => store.db);
  store.db.transaction(() => index.fold()).immediate();
  return store.db.prepare('SELECT stem, chunk, hex(postings) FROM bm25_postings ORDER BY stem, chunk').raw().all();
}

async function fill(cairn: Cairn, count: number, seed: number): Promise<string[]> {
  const next = rng(seed);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const project = i % 3 === 0 ? 'p1' : 'p2';
    const result = await cairn.remember({ text: text(next, i), project, ...(i % 7 === 0 ? { tags: ['deploy', 'café'] } : {}) });
    ids.push(result.memory.id);
  }
  return ids;
}

describe('BM25 postings beside memories_fts', () => {
  it('ranks exactly as FTS5 does (ids, order and scores) through writes, revisions, tag updates, forget, restore and folds', async () => {
    const store = await openSqliteStore(join(dir, 'ranks.db'));
    const cairn = createCairn({ store, embedder: null, clock, project: 'p1', actor: 'test' });
    const ids = await fill(cairn, 300, 1);
    const pending = (): number => store.db.prepare('SELECT count(*) FROM bm25_pending').pluck().get() as number;
    expect(pending()).toBe(300); // nothing folded yet: searches read the pending rows
    await expectSameAsFts5(store);
    // Revisions, tag changes, forget and restore: the index follows every change of memories_fts.
    for (const id of ids.slice(0, 40)) await cairn.revise(id, `revised parser café ${id}`);
    for (const id of ids.slice(40, 60)) await cairn.update(id, { tags: ['retry', 'Straße'] });
    await cairn.forget(ids.slice(60, 80));
    await cairn.restore(ids[60] as string);
    await expectSameAsFts5(store);
    // Past FOLD_AT_ROWS pending rows the blobs take them in.
    await fill(cairn, FOLD_AT_ROWS, 2);
    expect(pending()).toBeLessThan(FOLD_AT_ROWS);
    await expectSameAsFts5(store);
    // A forgotten memory never comes back from the index.
    const forgotten = new Set(ids.slice(61, 80));
    for (const query of QUERIES) for (const hit of await store.searchText(query, { limit: 1000 })) expect(forgotten.has(hit.id)).toBe(false);
    // Folded postings are byte for byte what a fresh backfill writes.
    const folded = postings(store);
    store.rebuildTermFrequencies();
    expect(postings(store)).toEqual(folded);
    await expectSameAsFts5(store);
    await store.close();
  }, 120_000);

  it('answers on a read-only connection too (accented and CJK terms are tokenized by FTS5 in the temp schema)', async () => {
    const path = join(dir, 'readonly.db');
    const store = await openSqliteStore(path);
    await fill(createCairn({ store, embedder: null, clock, project: 'p1', actor: 'test' }), 120, 6);
    await store.close();
    const reader = await openSqliteStore(path, { readonly: true });
    await expectSameAsFts5(reader);
    await reader.close();
  });

  it.skipIf(!existsSync(join(repo, 'dist/cli/main.js')))('an upgraded store: opening it fills one batch, `cairn migrate up` and `cairn ingest` fill the rest (needs `npm run build`)', async () => {
    const homes = ['migrate', 'ingest'].map((name) => join(dir, `upgraded-${name}`));
    for (const home of homes) {
      const store = await openSqliteStore(join(home, 'cairn.db'));
      await fill(createCairn({ store, embedder: null, clock, project: 'p1', actor: 'test' }), 2_500, 7);
      // What an older cairn leaves: memories, no postings.
      store.db.exec(`DELETE FROM bm25_postings; DELETE FROM bm25_pending; DELETE FROM state WHERE key = '${BACKFILL_KEY}'`);
      await store.close();
    }
    const cli = (home: string, ...args: string[]) => spawnSync(process.execPath, [join(repo, 'bin/cairn.js'), '--home', home, ...args], { encoding: 'utf8', env: { ...process.env, CAIRN_HOME: home } });
    const migrated = cli(homes[0] as string, 'migrate', 'up', '--json');
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(JSON.parse(migrated.stdout).postingsFilled).toBe(2_500); // migrate opens the raw database: nothing filled before
    const transcripts = join(dir, 'no-transcripts');
    mkdirSync(transcripts, { recursive: true });
    const ingested = cli(homes[1] as string, 'ingest', transcripts, '--fill-seconds', '0', '--json');
    expect(ingested.status, ingested.stderr).toBe(0);
    expect(JSON.parse(ingested.stdout).postingsFilled).toBe(1_500); // the store's open took the first 1,000
    for (const home of homes) {
      const store = await openSqliteStore(join(home, 'cairn.db'));
      expect(new TextSearchIndex(() => store.db).ready()).toBe(true);
      await expectSameAsFts5(store);
      await store.close();
    }
  }, 120_000);

  it('leaves a query to FTS5 while the backfill has not finished', async () => {
    const store = await openSqliteStore(join(dir, 'unfinished.db'));
    const cairn = createCairn({ store, embedder: null, clock, project: 'p1', actor: 'test' });
    await fill(cairn, 50, 3);
    store.db.prepare('UPDATE state SET value = ? WHERE key = ?').run('10', BACKFILL_KEY);
    const index = new TextSearchIndex(() => store.db);
    expect(index.ready()).toBe(false);
    expect(index.search(['parser'], 10, () => new Map())).toBeNull();
    await expectSameAsFts5(store, [{}], false);
    await store.close();
  });

  describe('backfill', () => {
    const dist = join(repo, 'dist/store/sqlite/text-search-index.js');
    beforeAll(() => {
      if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`npm run build\` (npm test does it first)`);
    });

    it('resumes after the process is killed (kill -9) and ends as a full backfill does', async () => {
      const path = join(dir, 'killed.db');
      const store = await openSqliteStore(path);
      await fill(createCairn({ store, embedder: null, clock, project: 'p1', actor: 'test' }), 1500, 4);
      const complete = postings(store);
      // An upgraded store: memories, no postings yet.
      store.db.exec(`DELETE FROM bm25_postings; DELETE FROM bm25_pending; DELETE FROM state WHERE key = '${BACKFILL_KEY}'`);
      await store.close();
      const script = join(dir, 'backfill.mjs');
      writeFileSync(
        script,
        `import Database from ${JSON.stringify(join(repo, 'node_modules/better-sqlite3/lib/index.js'))};
         import { TextSearchIndex } from ${JSON.stringify(dist)};
         import { indexText } from ${JSON.stringify(join(repo, 'dist/store/tokenize.js'))};
         import { memoryIndexSource } from ${JSON.stringify(join(repo, 'dist/store/memory-rows.js'))};
         const db = new Database(process.argv[2]);
         db.pragma('journal_mode = WAL');
         db.pragma('busy_timeout = 10000');
         const index = new TextSearchIndex(() => db);
         // One row a transaction, slowed down, so the kill lands in the middle.
         index.backfill((row) => { const until = Date.now() + 2; while (Date.now() < until); return indexText(memoryIndexSource({ text: row.text, tags: JSON.parse(row.tags), context: row.context })); }, { batch: 1 });`,
      );
      const child = spawn(process.execPath, [script, path], { stdio: 'ignore' });
      const reader = new Database(path, { readonly: true });
      const checkpoint = (): string | undefined => reader.prepare('SELECT value FROM state WHERE key = ?').pluck().get(BACKFILL_KEY) as string | undefined;
      const deadline = Date.now() + 60_000;
      while (Number(checkpoint() ?? 0) < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGKILL');
      await new Promise((r) => child.on('close', r));
      const stopped = checkpoint();
      reader.close();
      expect(stopped).not.toBe('done');
      expect(Number(stopped)).toBeGreaterThanOrEqual(200);
      expect(Number(stopped)).toBeLessThan(1500);
      // The next open goes on from the checkpoint, one bounded batch (never the whole store: a hook
      // may be the one opening it); searches stay FTS5's until fillTextSearchIndex completes it.
      const reopened = await openSqliteStore(path);
      const afterOpen = reopened.db.prepare('SELECT value FROM state WHERE key = ?').pluck().get(BACKFILL_KEY);
      expect(afterOpen).not.toBe('done');
      expect(Number(afterOpen)).toBe(Number(stopped) + 1000);
      await expectSameAsFts5(reopened, undefined, false);
      expect((await reopened.stats()).warnings?.join('\n')).toContain('BM25 index of older memories is not filled yet');
      expect(await reopened.fillTextSearchIndex()).toEqual({ filled: 1500 - Number(stopped) - 1000, complete: true });
      expect(reopened.db.prepare('SELECT value FROM state WHERE key = ?').pluck().get(BACKFILL_KEY)).toBe('done');
      expect(await reopened.fillTextSearchIndex()).toEqual({ filled: 0, complete: true });
      expect((await reopened.stats()).warnings ?? []).not.toContainEqual(expect.stringContaining('BM25'));
      expect(postings(reopened)).toEqual(complete);
      await expectSameAsFts5(reopened);
      await reopened.close();
    }, 120_000);

    it('a batch that fails leaves its checkpoint where it was and writes nothing of the batch', async () => {
      const store = await openSqliteStore(join(dir, 'failing.db'));
      await fill(createCairn({ store, embedder: null, clock, project: 'p1', actor: 'test' }), 40, 5);
      const complete = postings(store);
      store.db.exec(`DELETE FROM bm25_postings; DELETE FROM bm25_pending; DELETE FROM state WHERE key = '${BACKFILL_KEY}'`);
      const index = new TextSearchIndex(() => store.db);
      let calls = 0;
      const failing = (row: { text: string }): string => {
        if (++calls === 25) throw new Error('boom');
        return row.text;
      };
      expect(() => index.backfill(failing, { batch: 10 })).toThrow('boom');
      expect(store.db.prepare('SELECT value FROM state WHERE key = ?').pluck().get(BACKFILL_KEY)).toBe(String(20 + firstRowid(store) - 1));
      store.db.exec(`DELETE FROM bm25_postings; DELETE FROM state WHERE key = '${BACKFILL_KEY}'`);
      await store.close();
      const reopened = await openSqliteStore(join(dir, 'failing.db'));
      expect(postings(reopened)).toEqual(complete);
      await reopened.close();
    });
  });
});

function firstRowid(store: SqliteStore): number {
  return store.db.prepare('SELECT min(rowid) FROM memories').pluck().get() as number;
}
