import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { corpusKey, ensureCorpusDb, workingCopy } from '../../bench/src/dataset.js';
import { tempDir } from '../helpers/cli.js';

const cacheDir = tempDir('cairn-bench-cache-');
const MIGRATIONS = fileURLToPath(new URL('../../src/store/sqlite/migrations/', import.meta.url));

/** The newest SQLite migration: its version and the tables it creates. */
function newestMigration(): { version: number; tables: string[]; triggers: string[]; columns: Array<[string, string]> } {
  const file = readdirSync(MIGRATIONS).filter((name) => /^\d+_.*\.sql$/.test(name)).sort().at(-1) as string;
  const sql = readFileSync(join(MIGRATIONS, file), 'utf8');
  return {
    version: Number.parseInt(file, 10),
    tables: [...sql.matchAll(/CREATE TABLE IF NOT EXISTS (\w+)/g)].map((m) => m[1] as string),
    triggers: [...sql.matchAll(/CREATE TRIGGER (?:IF NOT EXISTS )?(\w+)/g)].map((m) => m[1] as string),
    columns: [...sql.matchAll(/ALTER TABLE (\w+) ADD COLUMN (\w+)/g)].map((m) => [m[1] as string, m[2] as string]),
  };
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
      // Make it the corpus the schema before the newest migration would have cached: version
      // latest - 1, without the tables, triggers and columns the newest migration creates (whichever
      // migration that is).
      const newest = newestMigration();
      expect(newest.version).toBe(latest);
      const db = new Database(built.path);
      expect(newest.tables.length + newest.triggers.length + newest.columns.length, 'what the newest migration creates').toBeGreaterThan(0);
      for (const trigger of newest.triggers) db.exec(`DROP TRIGGER ${trigger}`);
      for (const table of newest.tables) db.exec(`DROP TABLE ${table}`);
      for (const [table, column] of newest.columns) db.exec(`ALTER TABLE ${table} DROP COLUMN ${column}`);
      db.pragma(`user_version = ${latest - 1}`);
      db.close();
      const olderKey = corpusKey(spec, latest - 1);
      renameSync(built.path, join(dir, `${olderKey}.db`));
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
        for (const table of newest.tables) expect(after.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?").pluck().get(table), table).toBe(1);
        for (const trigger of newest.triggers) expect(after.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name = ?").pluck().get(trigger), trigger).toBe(1);
        for (const [table, column] of newest.columns) expect(after.prepare('SELECT count(*) FROM pragma_table_info(?) WHERE name = ?').pluck().get(table, column), `${table}.${column}`).toBe(1);
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
