/**
 * CJK and emoji substring queries find something (issue #17.10) on both stores, through recall
 * and transcript history, and a database indexed before terms version 2 is re-indexed on open.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { indexTerms, queryTerms, TERMS_VERSION, wordIndexText } from '../../src/store/tokenize.js';
import type { Store } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';

const TEXTS = [
  '数据库连接失败：重试三次后放弃 (src/db/pool.ts:42)',
  '日本語のテストケースを追加した',
  '한국어 검색이 안 됩니다',
  'deploy finished 🚀 and the checks are ✅',
  'plain English about the retry budget',
];

const QUERIES: Array<[string, number]> = [
  ['连接', 0],
  ['数据库', 0],
  ['重试', 0],
  ['テスト', 1],
  ['検索 검색', 2],
  ['🚀', 3],
  ['✅', 3],
];

describe('tokenizer: CJK and emoji terms', () => {
  it('adds unigrams and bigrams of CJK runs and a term per emoji, and nothing for other text', () => {
    expect(indexTerms('数据库')).toEqual(['数据库', '数', '数据', '据', '据库', '库']);
    expect(indexTerms('ship it 🚀')).toEqual(['ship', 'it', 'u1f680']);
    expect(queryTerms('连接')).toEqual(['连接', '连', '接']);
    expect(indexTerms('processWorkspaceChanges in café.ts')).toEqual(wordIndexText('processWorkspaceChanges in café.ts').split(' '));
    expect(TERMS_VERSION).toBe(2);
  });
});

async function expectFound(cairn: Cairn, ids: string[]): Promise<void> {
  for (const [query, index] of QUERIES) {
    const result = await cairn.recall({ query, k: 5 });
    expect(result.hits.map((h) => h.memory.id), query).toContain(ids[index]);
  }
  const none = await cairn.recall({ query: '火箭', k: 5 });
  expect(none.hits.map((h) => h.memory.id)).not.toContain(ids[3]);
}

async function rememberAll(cairn: Cairn): Promise<string[]> {
  const ids: string[] = [];
  for (const text of TEXTS) ids.push((await cairn.remember({ text })).memory.id);
  return ids;
}

describe('sqlite', () => {
  it('recall finds CJK and emoji substrings', async () => {
    const store = await openSqliteStore(join(tempDir('cairn-cjk-'), 'cairn.db'));
    const cairn = createCairn({ store, project: 'p', actor: 't' });
    await expectFound(cairn, await rememberAll(cairn));
    await cairn.close();
  });

  it('re-indexes a database written at terms version 1 when it is opened', async () => {
    const path = join(tempDir('cairn-cjk-old-'), 'cairn.db');
    let store: Store = await openSqliteStore(path);
    let cairn = createCairn({ store, project: 'p', actor: 't' });
    const ids = await rememberAll(cairn);
    await cairn.close();
    // What an older cairn left: word terms only, no version in the state table.
    const db = new Database(path);
    const rows = db.prepare<[], { rowid: number; text: string; tags: string }>('SELECT rowid, text, tags FROM memories').all();
    for (const row of rows) {
      db.prepare('DELETE FROM memories_fts WHERE rowid = ?').run(row.rowid);
      db.prepare('INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)').run(row.rowid, wordIndexText(`${row.text} ${(JSON.parse(row.tags) as string[]).join(' ')}`));
    }
    db.prepare("DELETE FROM state WHERE key = 'fts_terms_version'").run();
    db.close();

    store = await openSqliteStore(path);
    cairn = createCairn({ store, project: 'p', actor: 't' });
    await expectFound(cairn, ids);
    await cairn.close();
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT value FROM state WHERE key = 'fts_terms_version'").get()).toEqual({ value: '2' });
    check.close();
  });
});

describe('postgres (pglite)', () => {
  let pglite: PgServer;
  beforeAll(async () => {
    pglite = await startPglite();
  }, 60_000);
  afterAll(async () => {
    await pglite?.stop();
  });

  it('recall finds CJK and emoji substrings, and an old database is re-indexed on open', async () => {
    const url = withFreshSchema(pglite.url, 'cjk');
    let store = await openPostgresStore(url);
    let cairn = createCairn({ store, project: 'p', actor: 't' });
    const ids = await rememberAll(cairn);
    await expectFound(cairn, ids);
    // Back to what an older cairn wrote: word terms only, no terms version.
    const { db } = store as unknown as { db: { query: (sql: string, params?: unknown[]) => Promise<{ rows: Array<{ id: string; text: string }> }> } };
    const rows = (await db.query('SELECT id, text FROM memories')).rows;
    const { stem } = await import('../../src/store/postgres/stem.js');
    for (const row of rows) {
      const lexemes = [...new Set(wordIndexText(row.text).split(' ').filter((t) => t.length > 0).map((t) => stem(t)))];
      await db.query("UPDATE memories SET terms = to_tsvector('simple', $2) WHERE id = $1", [row.id, lexemes.join(' ')]);
    }
    await db.query("DELETE FROM state WHERE key = 'fts_terms_version'");
    expect((await cairn.recall({ query: '🚀', k: 5 })).hits.map((h) => h.memory.id)).not.toContain(ids[3]);
    await cairn.close();

    store = await openPostgresStore(url);
    cairn = createCairn({ store, project: 'p', actor: 't' });
    await expectFound(cairn, ids);
    await cairn.close();
  }, 120_000);
});
