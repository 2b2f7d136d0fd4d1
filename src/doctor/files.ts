/**
 * The checks `cairn doctor` makes before opening anything, so it reports even when the store
 * cannot be opened: the config file, the database file (empty, not SQLite, damaged —
 * `PRAGMA integrity_check`), its schema version, free disk space and permissions.
 */
import { accessSync, constants, existsSync, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { loadMigrations } from '../store/sqlite/database.js';
import type { DoctorCheck } from './doctor.js';

/** Below this much free space on the store's disk, writes (and VACUUM) may fail. */
const LOW_DISK_BYTES = 512 * 1024 * 1024;

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The SQLite file at `path`: present, non-empty, a database, intact, a schema this cairn knows. */
export function checkDatabaseFile(path: string): DoctorCheck[] {
  if (!existsSync(path)) {
    return [{ check: 'database', status: 'warn', detail: `${path} does not exist yet`, advice: 'it is created by the first `cairn remember` or `cairn ingest`' }];
  }
  const size = statSync(path).size;
  if (size === 0 && !existsSync(`${path}-wal`)) {
    return [{ check: 'database', status: 'fail', detail: `${path} is an empty file (0 bytes)`, advice: 'restore it from a backup, or move it away to start a new store' }];
  }
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const rows = db.pragma('integrity_check', { simple: false }) as Array<{ integrity_check: string }>;
    const problems = rows.map((r) => r.integrity_check).filter((r) => r !== 'ok');
    const checks: DoctorCheck[] = [];
    checks.push(
      problems.length === 0
        ? { check: 'database', status: 'ok', detail: `${path}: PRAGMA integrity_check ok (${(size / 1e6).toFixed(1)} MB)` }
        : {
            check: 'database',
            status: 'fail',
            detail: `${path} is damaged: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ` (+${problems.length - 3} more)` : ''}`,
            advice: 'restore a backup, or `cairn export` what is readable and import it into a fresh home',
          },
    );
    const version = db.pragma('user_version', { simple: true }) as number;
    const latest = loadMigrations().at(-1)?.version ?? 0;
    if (version > latest) checks.push({ check: 'schema', status: 'fail', detail: `schema v${version} is newer than this cairn (v${latest})`, advice: 'upgrade cairn' });
    else if (version < latest) checks.push({ check: 'schema', status: 'ok', detail: `schema v${version}; v${latest} is applied the next time the store opens for writing` });
    else checks.push({ check: 'schema', status: 'ok', detail: `schema v${version} (current)` });
    return checks;
  } catch (error) {
    return [{ check: 'database', status: 'fail', detail: `${path} is not a readable SQLite database: ${errorMessage(error)}`, advice: 'restore it from a backup, or move it away to start a new store' }];
  } finally {
    db?.close();
  }
}

/** Free space on the store's disk and write access to its folder and file. */
export function checkDiskAndPermissions(path: string): DoctorCheck[] {
  const dir = dirname(path);
  const checks: DoctorCheck[] = [];
  if (!existsSync(dir)) return [{ check: 'permissions', status: 'warn', detail: `${dir} does not exist`, advice: `create it (mkdir -p ${dir})` }];
  try {
    const fs = statfsSync(dir);
    const free = fs.bavail * fs.bsize;
    const detail = `${(free / 1e9).toFixed(1)} GB free on the store's disk`;
    checks.push(free < LOW_DISK_BYTES ? { check: 'disk space', status: 'warn', detail, advice: 'free some space: writes and `cairn maintain` need room' } : { check: 'disk space', status: 'ok', detail });
  } catch (error) {
    checks.push({ check: 'disk space', status: 'warn', detail: `cannot tell: ${errorMessage(error)}` });
  }
  const problems: string[] = [];
  for (const [target, what] of [
    [dir, 'folder'],
    [path, 'database'],
  ] as const) {
    if (!existsSync(target)) continue;
    try {
      accessSync(target, constants.R_OK | constants.W_OK);
    } catch {
      problems.push(`the ${what} ${target} is not readable and writable by this user`);
    }
  }
  checks.push(problems.length === 0 ? { check: 'permissions', status: 'ok', detail: 'store folder and database are readable and writable' } : { check: 'permissions', status: 'fail', detail: problems.join('; '), advice: 'fix the owner or mode (chmod u+rw)' });
  return checks;
}
