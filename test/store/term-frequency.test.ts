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
});
