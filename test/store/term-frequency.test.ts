import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { loadMigrations } from '../../src/store/sqlite/database.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-termdf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** term_df with its pending changes as kept on write, and as counted from the full-text index itself. */
function frequencies(store: SqliteStore): { kept: Array<[string, number]>; counted: Array<[string, number]> } {
  const kept = store.db
    .prepare(
      `SELECT term, sum(df) FROM (SELECT term, df FROM term_df UNION ALL SELECT term, delta FROM term_df_pending)
        GROUP BY term HAVING sum(df) > 0 ORDER BY term`,
    )
    .raw()
    .all() as Array<[string, number]>;
  const counted = store.db.prepare('SELECT term, doc FROM memories_vocab ORDER BY term').raw().all() as Array<[string, number]>;
  return { kept, counted };
}

const clock = { now: () => Date.UTC(2026, 0, 1) };

describe('sqlite term frequencies (term_df)', () => {
  it('stays equal to the index through remember, revise, update of tags, forget and restore', async () => {
    const store = await openSqliteStore(':memory:');
    const cairn = createCairn({ store, embedder: null, clock, project: 'github.com/acme/app', actor: 'test' });
    const a = await cairn.remember({ text: 'Run pnpm test before pushing; the running tests need Postgres', tags: ['testing'] });
    await cairn.remember({ text: 'The parseConfig function in src/config.ts:42 reads CAIRN_HOME', kind: 'fact' });
    const c = await cairn.remember({ text: 'Deploys go through scripts/deploy.sh with --dry-run first' });
    await cairn.revise(a.memory.id, 'Run pnpm test:unit before pushing; integration tests need Postgres 16');
    await cairn.update(c.memory.id, { tags: ['deploy', 'scripts'] });
    await cairn.forget([c.memory.id]);
    await cairn.restore(c.memory.id);
    const { kept, counted } = frequencies(store);
    expect(kept.length).toBeGreaterThan(10);
    expect(kept).toEqual(counted);
    await store.close();
  });

  it('is filled from the index by the migration that adds it', async () => {
    const path = join(dir, 'from-5.db');
    const db = new Database(path);
    for (const m of loadMigrations().filter((m) => m.version <= 5)) {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }
    const insert = db.prepare(
      "INSERT INTO memories (id, text, kind, scope, source, created_at, updated_at, valid_from, content_hash) VALUES (?, ?, 'fact', 'user', 'manual', 1, 1, 1, ?)",
    );
    for (const [i, text] of ['alpha beta gamma', 'beta gamma running', 'gamma runs'].entries()) {
      const rowid = Number(insert.run(`M${i}`, text, `h${i}`).lastInsertRowid);
      db.prepare('INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)').run(rowid, text);
    }
    db.close();
    const store = await openSqliteStore(path);
    const { kept, counted } = frequencies(store);
    expect(kept).toEqual([['alpha', 1], ['beta', 2], ['gamma', 3], ['run', 2]]);
    expect(kept).toEqual(counted);
    store.db.prepare('DELETE FROM term_df').run();
    store.rebuildTermFrequencies();
    expect(frequencies(store).kept).toEqual(counted);
    await store.close();
  });

  it('finds a near-duplicate whose rarest terms are few among many common ones', async () => {
    // 600 memories share "rollout" and "canary": the probe then requires one of the text's two
    // rarest terms and ranks by all of them, instead of ranking every memory with any.
    const store = await openSqliteStore(':memory:');
    const cairn = createCairn({ store, embedder: null, clock, project: 'github.com/acme/app', actor: 'test' });
    for (let i = 0; i < 600; i++) await cairn.remember({ text: `rollout ${i} of the canary build for region r${i}` });
    const target = await cairn.remember({ text: 'rollout of the canary build pauses when zephyrcache reports quokka errors' });
    const near = await cairn.remember({ text: 'the canary build rollout pauses whenever zephyrcache reports quokka errors' });
    expect(near.created).toBe(true);
    expect(near.similar.map((s) => s.id)).toEqual([target.memory.id]);
    // ~6,000 term rows were appended: folded into term_df on the way.
    expect(store.db.prepare('SELECT count(*) FROM term_df_pending').pluck().get()).toBeLessThan(2048);
    const { kept, counted } = frequencies(store);
    expect(kept).toEqual(counted);
    expect(store.db.prepare("SELECT df FROM term_df WHERE term = 'canari'").pluck().get()).toBeGreaterThan(300);
    await store.close();
  });

  it("a process's cached figures follow other processes' writes, folds and rebuilds", async () => {
    const path = join(dir, 'two-processes.db');
    const reader = await openSqliteStore(path);
    const writer = await openSqliteStore(path);
    const cairn = createCairn({ store: writer, embedder: null, clock, project: 'github.com/acme/app', actor: 'test' });
    const terms = ['rollout', 'canary', 'region', 'quokka', 'zephyrcache', 'build'];
    const of = (store: SqliteStore): number[] => (store as unknown as { termFrequencies: { of(t: string[]): number[] } }).termFrequencies.of(terms);
    /** The same figures read from the tables alone, as a fresh process does. */
    const counted = (): number[] => {
      const byTerm = new Map(frequencies(writer).counted);
      return ['rollout', 'canari', 'region', 'quokka', 'zephyrcach', 'build'].map((stem) => byTerm.get(stem) ?? 0);
    };
    const folds = (): unknown => writer.db.prepare("SELECT value FROM state WHERE key = 'term_df_folds'").pluck().get();
    expect(of(reader)).toEqual([0, 0, 0, 0, 0, 0]);
    for (let i = 0; i < 200; i++) {
      await cairn.remember({ text: `rollout ${i} of the canary build for region r${i} ${i % 7 === 0 ? 'quokka' : ''} w${i}a w${i}b w${i}c w${i}d w${i}e w${i}f` });
      if (i % 13 === 0) expect(of(reader)).toEqual(counted());
    }
    expect(Number(folds())).toBeGreaterThanOrEqual(1);
    expect(of(reader)).toEqual(counted());
    // A fold by a process that does not count folds (an older cairn): the table restarts below the reader's rowid.
    writer.db.transaction(() => {
      writer.db.prepare('INSERT INTO term_df (term, df) SELECT term, sum(delta) FROM term_df_pending WHERE true GROUP BY term ON CONFLICT (term) DO UPDATE SET df = df + excluded.df').run();
      writer.db.prepare('DELETE FROM term_df_pending').run();
    })();
    await cairn.remember({ text: 'rollout of the canary build pauses when zephyrcache reports quokka errors' });
    expect(of(reader)).toEqual(counted());
    writer.rebuildTermFrequencies();
    await cairn.remember({ text: 'a canary in region eu-west' });
    expect(of(reader)).toEqual(counted());
    // Inside a write transaction the figures include its own rows, and a rollback leaves no trace.
    expect(() =>
      reader.db.transaction(() => {
        reader.db.prepare("INSERT INTO term_df_pending (term, delta) VALUES ('quokka', 5)").run();
        expect(of(reader)[3]).toBe((counted()[3] as number) + 5);
        throw new Error('roll back');
      })(),
    ).toThrow('roll back');
    expect(of(reader)).toEqual(counted());
    await reader.close();
    await writer.close();
  });
});
