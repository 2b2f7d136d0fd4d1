/**
 * Migration 011: session fact occurrences lose their index by (session_id, seq), the second B-tree
 * every occurrence was inserted into at ingest. A store whose facts were written before it keeps
 * every fact and occurrence, lists and expands them exactly as before, and takes new ingests.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase } from '../../src/store/sqlite/database.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { createSqliteSubstrate, type SqliteSubstrate } from '../../src/store/sqlite/substrate.js';
import type { FactListOptions } from '../../src/types.js';
import { fixtures, ingest, tempDir } from './helpers.js';

const LISTINGS: FactListOptions[] = [{}, { limit: 20_000 }, { fromSeq: 2, beforeSeq: 9 }, { kinds: ['path', 'command'] }, { nearSeq: 4, window: 3 }, { limit: 3 }];

/** Every listing of every session and every fact expanded by id, as JSON (order as returned). */
async function readBack(substrate: SqliteSubstrate): Promise<string[]> {
  const out: string[] = [];
  const sessions = (await substrate.listSessions({ limit: 10_000 })).map((s) => s.id).sort();
  for (const id of sessions) {
    for (const options of LISTINGS) out.push(JSON.stringify(await substrate.listFacts(id, options)));
    for (const fact of await substrate.listFacts(id, { limit: 20_000 })) out.push(JSON.stringify(await substrate.getFact(fact.id)));
  }
  return out;
}

const hasIndex = (db: { prepare(sql: string): { get(...args: unknown[]): unknown } }, name: string) =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) !== undefined;

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

describe('migration 011 (fact occurrences without their index by session)', () => {
  it('keeps every fact of a store written before it, read back the same, and takes new ingests', async () => {
    const dir = tempDir('cairn-fact-refs-');
    dirs.push(dir);
    const path = join(dir, 'cairn.db');
    const migrations = loadMigrations();
    const before = migrations.filter((m) => m.version < 11);
    expect(before.at(-1)?.version).toBe(10);

    // A store as the previous schema wrote it: facts and their occurrences ingested at version 10.
    const old = openDatabase(path, { migrations: before });
    const oldSubstrate = createSqliteSubstrate(old);
    const first = await ingest([fixtures], oldSubstrate);
    expect(first.facts).toBeGreaterThan(20);
    expect(hasIndex(old, 'session_fact_refs_session')).toBe(true);
    const oldRows = old.prepare('SELECT * FROM session_fact_refs ORDER BY fact_id, turn_id').all();
    const oldFacts = old.prepare('SELECT * FROM session_facts ORDER BY pk').all();
    const expected = await readBack(oldSubstrate);
    expect(expected.some((listing) => listing !== '[]')).toBe(true);
    old.close();

    const store = await openSqliteStore(path);
    expect((await store.stats()).schemaVersion).toBe(migrations.at(-1)?.version);
    expect(hasIndex(store.db, 'session_fact_refs_session')).toBe(false);
    expect(hasIndex(store.db, 'session_facts_session')).toBe(true);
    expect(store.db.prepare('SELECT * FROM session_fact_refs ORDER BY fact_id, turn_id').all()).toEqual(oldRows);
    expect(store.db.prepare('SELECT * FROM session_facts ORDER BY pk').all()).toEqual(oldFacts);
    expect(await readBack(store.substrate)).toEqual(expected);

    // The same transcripts again add nothing; the listings stay as they were.
    const again = await ingest([fixtures], store.substrate);
    expect(again.turns).toBe(0);
    expect(store.db.prepare('SELECT count(*) AS n FROM session_fact_refs').get()).toEqual({ n: oldRows.length });
    expect(await readBack(store.substrate)).toEqual(expected);
    await store.close();
  });

  it('lists the same facts as a store that never had the index, for a store built fresh', async () => {
    const dir = tempDir('cairn-fact-refs-');
    dirs.push(dir);
    const fresh = await openSqliteStore(join(dir, 'fresh.db'));
    await ingest([fixtures], fresh.substrate);
    const withIndex = openDatabase(join(dir, 'old.db'), { migrations: loadMigrations().filter((m) => m.version < 11) });
    const oldSubstrate = createSqliteSubstrate(withIndex);
    await ingest([fixtures], oldSubstrate);
    expect(await readBack(fresh.substrate)).toEqual(await readBack(oldSubstrate));
    withIndex.close();
    await fresh.close();
  });
});
