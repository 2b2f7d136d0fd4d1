import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { corpusKey, ensureCorpusDb, workingCopy } from '../../bench/src/dataset.js';
import { loadMigrations } from '../../src/store/sqlite/database.js';
import { tempDir } from '../helpers/cli.js';

const cacheDir = tempDir('cairn-bench-cache-');

/** A store's tables, indexes, triggers and views, with their SQL, in name order. */
function schemaOf(db: Database.Database): unknown[] {
  return db.prepare("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
}

/** Delete a database file and its WAL and shared-memory files. */
function removeDb(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
}

/**
 * The corpus at `builtPath` as the schema `version` held it: a store made by the migrations up to
 * `version` alone, holding the built corpus's memories (same rowids; the columns both schemas
 * have). Whatever the newer migrations do — create, alter or drop — the result is what a cairn of
 * that version would have cached.
 */
function atSchema(builtPath: string, olderPath: string, version: number): void {
  const db = new Database(olderPath);
  try {
    for (const m of loadMigrations().filter((m) => m.version <= version)) {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }
    db.prepare('ATTACH DATABASE ? AS built').run(builtPath);
    const builtColumns = new Set(db.prepare("SELECT name FROM pragma_table_info('memories', 'built')").pluck().all() as string[]);
    const columns = (db.prepare("SELECT name FROM pragma_table_info('memories', 'main')").pluck().all() as string[]).filter((c) => builtColumns.has(c));
    db.exec(`INSERT INTO main.memories (rowid, ${columns.join(', ')}) SELECT rowid, ${columns.join(', ')} FROM built.memories ORDER BY rowid`);
    db.exec('DETACH DATABASE built');
  } finally {
    db.close();
  }
}

afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

describe('corpus databases', () => {
  it('stores every known answer as an active memory, then reuses the cache', async () => {
    const built = await ensureCorpusDb(cacheDir, { seed: 3, size: 400 });
    expect(built.buildMs).not.toBeNull();
    const { manifest } = built;
    expect(manifest.rows.inserted + manifest.rows.duplicates).toBe(400);
    expect(manifest.rows.revised).toBeGreaterThan(0);
    expect(manifest.queries.length).toBe(40);
    const db = new Database(built.path, { readonly: true });
    try {
      const active = db.prepare('SELECT count(*) FROM memories WHERE id = ? AND valid_to IS NULL AND deleted_at IS NULL').pluck();
      for (const q of manifest.queries) expect(active.get(q.targetId), q.text).toBe(1);
      expect(db.prepare('SELECT count(*) FROM memories WHERE valid_to IS NOT NULL').pluck().get()).toBe(manifest.rows.revised);
      expect(db.prepare('SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL').pluck().get()).toBe(manifest.rows.forgotten);
    } finally {
      db.close();
    }
    const again = await ensureCorpusDb(cacheDir, { seed: 3, size: 400 });
    expect(again.buildMs).toBeNull();
    expect(again.manifest.sha256).toBe(manifest.sha256);
    const copy = workingCopy(again, join(cacheDir, 'work'));
    expect(existsSync(copy.path)).toBe(true);
    copy.dispose();
    expect(existsSync(copy.path)).toBe(false);
  });

  it('sweeps files abandoned by killed runs, and only those', async () => {
    const dead = 2 ** 22 + 12345; // above Linux's default pid_max: never a live process
    const abandoned = [join(cacheDir, `x.building-${dead}.db`), join(cacheDir, `x.building-${dead}.db-wal`)];
    const mine = join(cacheDir, `y.building-${process.pid}.db`);
    for (const file of [...abandoned, mine]) writeFileSync(file, '');
    await ensureCorpusDb(cacheDir, { seed: 3, size: 400 });
    for (const file of abandoned) expect(existsSync(file)).toBe(false);
    expect(existsSync(mine)).toBe(true);
  });
  it('brings a corpus cached under an earlier schema forward by migration instead of rebuilding it', async () => {
    const dir = tempDir('cairn-bench-cache-migrate-');
    try {
      const spec = { seed: 5, size: 200 };
      const built = await ensureCorpusDb(dir, spec);
      const latest = built.manifest.schemaVersion;
      // Make it the corpus the schema before the newest migration would have cached.
      expect(loadMigrations().at(-1)?.version).toBe(latest);
      const fresh = new Database(built.path, { readonly: true });
      const freshSchema = schemaOf(fresh);
      fresh.close();
      const olderKey = corpusKey(spec, latest - 1);
      atSchema(built.path, join(dir, `${olderKey}.db`), latest - 1);
      removeDb(built.path);
      writeFileSync(join(dir, `${olderKey}.json`), JSON.stringify({ ...built.manifest, key: olderKey, schemaVersion: latest - 1 }));
      rmSync(join(dir, `${built.manifest.key}.json`));

      const lines: string[] = [];
      const migrated = await ensureCorpusDb(dir, spec, (line) => lines.push(line));
      expect(migrated.buildMs).toBeNull();
      expect(lines.join('\n')).toContain('migrated cached corpus');
      expect(lines.join('\n')).not.toContain('building corpus');
      expect(migrated.manifest.key).toBe(built.manifest.key);
      expect(migrated.manifest.schemaVersion).toBe(latest);
      expect(migrated.manifest.sha256).toBe(built.manifest.sha256);
      expect(JSON.parse(readFileSync(join(dir, `${built.manifest.key}.json`), 'utf8')).schemaVersion).toBe(latest);
      const after = new Database(migrated.path, { readonly: true });
      try {
        expect(after.pragma('user_version', { simple: true })).toBe(latest);
        // The same tables, indexes and triggers as a store built at the newest schema.
        expect(schemaOf(after)).toEqual(freshSchema);
        expect(after.prepare('SELECT count(*) FROM memories').pluck().get()).toBe(built.manifest.rows.inserted);
      } finally {
        after.close();
      }
      expect(existsSync(`${migrated.path}-wal`) && readFileSync(`${migrated.path}-wal`).length > 0).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
