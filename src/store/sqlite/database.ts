import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';
import { CairnError } from '../../errors.js';
import { packagePath } from '../../paths.js';
import { nodeCrypto } from '../../runtime.js';
import { BetterSqlite3 } from './driver.js';

/** Migrations ship as numbered SQL files in src/store/sqlite/migrations (also used from dist/). */
const MIGRATIONS_DIR = (): string => packagePath('src', 'store', 'sqlite', 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir: string = MIGRATIONS_DIR()): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(join(dir, file), 'utf8'),
    }));
}

const requireModule = createRequire(import.meta.url);

let binding: string | null | undefined;

/**
 * better-sqlite3's compiled addon where its install put it (build/Release), so opening skips the
 * `bindings` package's search (a stack trace and a dozen paths tried, ~2–3 ms of every hook);
 * null when it is elsewhere, and better-sqlite3 looks for it as usual.
 */
function nativeBinding(): string | null {
  if (binding === undefined) {
    try {
      const path = join(dirname(requireModule.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
      binding = existsSync(path) ? path : null;
    } catch {
      binding = null;
    }
  }
  return binding;
}

/** The newest migration's version, from the file names alone (no SQL read). */
function latestMigration(dir: string = MIGRATIONS_DIR()): number {
  let latest = 0;
  for (const file of readdirSync(dir)) if (/^\d{3}_[\w-]+\.sql$/.test(file)) latest = Math.max(latest, Number(file.slice(0, 3)));
  return latest;
}

export interface OpenOptions {
  /** Milliseconds to wait for another process's write lock. @default 10000 */
  busyTimeoutMs?: number;
  readonly?: boolean;
  migrations?: Migration[];
}

/**
 * Open (creating when needed) a cairn SQLite database: WAL, a busy timeout so several agent
 * processes can write, and forward migrations applied in one transaction each.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Database.Database {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true });
    if (!options.readonly && !existsSync(path)) createDatabaseFile(path);
    // SQLite takes an empty file for a new database; a 0-byte cairn.db is a lost one, not a fresh start.
    if (existsSync(path) && statSync(path).isFile() && statSync(path).size === 0 && !existsSync(`${path}-wal`)) {
      throw new CairnError(
        'STORE_CORRUPT',
        `database ${path} is an empty file (0 bytes): cairn will not start a new database over it; move it away (or delete it) to start over, or restore a backup`,
      );
    }
  }
  let db: Database.Database;
  try {
    const addon = nativeBinding();
    db = new BetterSqlite3(path, { timeout: options.busyTimeoutMs ?? 10_000, readonly: options.readonly ?? false, ...(addon ? { nativeBinding: addon } : {}) });
  } catch (error) {
    throw storeError(path, error);
  }
  try {
    if (!options.readonly) db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('temp_store = MEMORY');
    db.pragma('cache_size = -4000');
    // No mmap_size: mapped pages count in the process's resident memory, and the MCP server's idle
    // RSS at 100K went 77.6 → 225.2 MB with a 1 GiB mapping (SPEC §9: ≤ 80 MB; docs/BENCHMARKS.md `## write`).
    // An up-to-date database (every hook's case) is not sent the migrations' SQL, so it is not read.
    if (options.migrations) migrate(db, options.migrations);
    else if (schemaVersion(db) !== latestMigration()) migrate(db, loadMigrations());
  } catch (error) {
    db.close();
    throw storeError(path, error);
  }
  return db;
}

/**
 * A new database file appears whole: it is made beside `path` (header written, WAL mode) and
 * hard-linked into place, so a process opening the same new store at that moment never finds a
 * 0-byte file, which {@link openDatabase} refuses as a lost database. Whoever links first wins;
 * the others open the winner's file. Where that fails (no hard links, no permission) SQLite
 * creates the file itself, as before.
 */
export function createDatabaseFile(path: string): void {
  const temp = `${path}.new-${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`;
  try {
    const addon = nativeBinding();
    const db = new BetterSqlite3(temp, addon ? { nativeBinding: addon } : {});
    try {
      db.pragma('journal_mode = WAL');
    } finally {
      db.close();
    }
    linkSync(temp, path);
  } catch {
    // EEXIST: another process linked its file first. Anything else (no hard links, no write
    // permission): SQLite creates or refuses the file below and says why.
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${temp}${suffix}`, { force: true });
  }
}

/** SQLite's corruption codes as one clear CairnError; anything else as it was. */
export function storeError(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new CairnError('STORE_CORRUPT', `database ${path} is damaged or not a cairn database (${(error as Error).message}); run \`cairn doctor\``, { cause: error });
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM') {
    return new CairnError('STORE_UNAVAILABLE', `cannot open database ${path}: ${(error as Error).message} (check the file's permissions)`, { cause: error });
  }
  return error;
}

export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Apply every migration newer than the database, each in an IMMEDIATE transaction. */
export function migrate(db: Database.Database, migrations: Migration[]): void {
  const latest = migrations.at(-1)?.version ?? 0;
  const current = schemaVersion(db);
  if (current > latest) {
    throw new CairnError(
      'SCHEMA_TOO_NEW',
      `database ${db.name} has schema version ${current}, newer than this cairn understands (${latest}); upgrade cairn`,
    );
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    const apply = db.transaction(() => {
      // Another process may have migrated while we waited for the lock.
      if (schemaVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    });
    apply.immediate();
  }
}
