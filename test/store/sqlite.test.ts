import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/store/sqlite/database.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { makeMemory, storeConformance } from './conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeConformance('sqlite (file)', () => openSqliteStore(join(dir, `c${n++}.db`)));
storeConformance('sqlite (:memory:)', () => openSqliteStore(':memory:'));

describe('sqlite listMemories (raw rows)', () => {
  it('returns the same memories, every field, as getMemories (keyed rows) does', async () => {
    const store = await openSqliteStore(':memory:');
    const full = makeMemory({
      text: 'every column set', kind: 'correction', scope: 'user', project: null, session: 's-1', tags: ['a', 'b'], importance: 0.9,
      source: 'hook', provenance: { transcript: '/t.jsonl', line: 7, sessionId: 's-1' }, context: 'asked about columns',
      files: [{ path: 'src/x.ts', line: 3, hash: 'abc', lineText: 'const x = 1;' }], supersedes: 'M-old', accessCount: 4,
      lastAccessedAt: 1_700_000_500_000, lastRecalledAt: 1_700_000_600_000, pinned: true, meta: { origin: 'test', n: 2 },
    });
    const plain = makeMemory({ text: 'defaults only' });
    for (const m of [full, plain]) await store.writeMemory({ memory: m, events: [{ memoryId: m.id, type: 'create', at: m.createdAt, actor: 'test', data: {} }] });
    const listed = await store.listMemories({ order: 'created-asc' });
    expect(listed).toEqual(await store.getMemories([full.id, plain.id]));
    expect(listed).toEqual([full, plain]);
    // Field for field in the same order too: the context cache stores memories as JSON.
    expect(JSON.stringify(listed)).toBe(JSON.stringify(await store.getMemories([full.id, plain.id])));
    await store.close();
  });
});

describe('sqlite migrations', () => {
  it('refuses a database written by a newer schema, with a clear message', async () => {
    const path = join(dir, 'newer.db');
    const db = new Database(path);
    db.pragma('user_version = 999');
    db.close();
    await expect(openSqliteStore(path)).rejects.toThrow(/schema version 999, newer than this cairn understands/);
  });

  it('migrates forward from every earlier version and keeps the data', async () => {
    const migrations = loadMigrations();
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    for (let upTo = 1; upTo <= migrations.length; upTo++) {
      const path = join(dir, `from-${upTo}.db`);
      const db = new Database(path);
      for (const m of migrations.slice(0, upTo)) {
        db.exec(m.sql);
        db.pragma(`user_version = ${m.version}`);
      }
      db.prepare(
        "INSERT INTO memories (id, text, kind, scope, source, created_at, updated_at, valid_from, content_hash) VALUES ('X1', 'kept across migrations', 'fact', 'user', 'manual', 1, 1, 1, 'h')",
      ).run();
      db.close();
      const store = await openSqliteStore(path);
      expect((await store.getMemory('X1'))?.text).toBe('kept across migrations');
      // Migration 010 adds Memory.context: rows written before it have none.
      expect((await store.getMemory('X1'))?.context).toBeNull();
      expect((await store.stats()).schemaVersion).toBe(migrations.length);
      await store.close();
    }
  });

  it('migration 018 drops memories_hash; the exact-duplicate check and guard keep memories_active_hash', async () => {
    const path = join(dir, 'before-018.db');
    const db = new Database(path);
    for (const m of loadMigrations().filter((m) => m.version <= 17)) {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }
    const insert = "INSERT INTO memories (id, text, kind, scope, project, source, created_at, updated_at, valid_from, content_hash) VALUES (?, 'same words', 'fact', 'project', 'p', 'manual', 1, 1, 1, 'h1')";
    db.prepare(insert).run('X1');
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'memories_hash'").pluck().get()).toBe(1);
    db.close();
    const store = await openSqliteStore(path);
    const indexes = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memories'").pluck().all();
    expect(indexes).not.toContain('memories_hash');
    expect(indexes).toContain('memories_active_hash');
    expect((await store.findByContentHash('h1', 'p'))?.id).toBe('X1');
    const plan = store.db
      .prepare("EXPLAIN QUERY PLAN SELECT id FROM memories m WHERE coalesce(m.project, '') = 'p' AND m.content_hash = 'h1' AND m.valid_to IS NULL AND m.deleted_at IS NULL")
      .all()
      .map((row) => (row as { detail: string }).detail)
      .join(' ');
    expect(plan).toMatch(/memories_active_hash/);
    // Two active memories of one project with the same hash are still refused.
    expect(() => store.db.prepare(insert).run('X2')).toThrow(/UNIQUE constraint/);
    await store.close();
  });

  it('opens in WAL mode with a busy timeout', async () => {
    const store = await openSqliteStore(join(dir, 'wal.db'));
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('busy_timeout', { simple: true })).toBeGreaterThanOrEqual(5000);
    await store.close();
  });
});
