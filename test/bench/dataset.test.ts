import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureCorpusDb, workingCopy } from '../../bench/src/dataset.js';
import { tempDir } from '../helpers/cli.js';

const cacheDir = tempDir('cairn-bench-cache-');
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
});
