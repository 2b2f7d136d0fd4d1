import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Run `read` on a copy of the SQLite database at `path` (with its WAL), opened read-write, then
 * delete the copy. For inspecting a store a `kill -9` left behind: a read-only connection cannot
 * always rebuild the WAL index the killed writer left half-written ("attempt to write a readonly
 * database", SQLITE_READONLY_RECOVERY), and a writable one on the original would recover and
 * checkpoint the WAL that the re-run under test must recover itself. No process may be writing.
 */
export function readDatabaseCopy<T>(path: string, read: (db: Database.Database) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-db-copy-'));
  try {
    const copy = join(dir, basename(path));
    copyFileSync(path, copy);
    if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
    const db = new Database(copy, { fileMustExist: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
