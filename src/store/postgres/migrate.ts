/**
 * PostgreSQL migrations: numbered SQL files in src/store/postgres/migrations, recorded in
 * `cairn_schema`, each applied in its own transaction under an advisory lock so several cairn
 * processes starting at once migrate exactly once. A schema newer than this code is refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CairnError } from '../../errors.js';
import type { PgDatabase, Queryable } from './driver.js';

/** Shipped next to the sources and used from dist/ too (package.json "files" lists the folder). */
const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../src/store/postgres/migrations');

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

export function loadPgMigrations(dir: string = MIGRATIONS_DIR): PgMigration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 3)), name: file.slice(4, -4), sql: readFileSync(join(dir, file), 'utf8') }));
}

export interface MigrationStatus {
  /** Highest version applied to the database (0 when empty). */
  current: number;
  /** Highest version this code ships. */
  latest: number;
  applied: Array<{ version: number; name: string; appliedAt: number }>;
  pending: Array<{ version: number; name: string }>;
}

/** One advisory lock key per schema, so stores in different schemas migrate independently. */
function lockKey(schema: string | null): string {
  return `cairn:migrate:${schema ?? ''}`;
}

async function prepare(client: Queryable, schema: string | null): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey(schema)]);
  if (schema) {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`SET LOCAL search_path TO "${schema}", public`);
  }
  await client.query(
    'CREATE TABLE IF NOT EXISTS cairn_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)',
  );
}

async function appliedRows(client: Queryable): Promise<Array<{ version: number; name: string; applied_at: number }>> {
  const result = await client.query<{ version: number; name: string; applied_at: number }>(
    'SELECT version, name, applied_at FROM cairn_schema ORDER BY version',
  );
  return result.rows;
}

function tooNew(current: number, latest: number, where: string): CairnError {
  return new CairnError(
    'SCHEMA_TOO_NEW',
    `database ${where} has schema version ${current}, newer than this cairn understands (${latest}); upgrade cairn`,
  );
}

/** What is applied and what is pending, without changing anything. */
export async function migrationStatus(db: PgDatabase, migrations: PgMigration[] = loadPgMigrations()): Promise<MigrationStatus> {
  const rows = await db.transaction(async (client) => {
    if (db.schema) await client.query(`SET LOCAL search_path TO "${db.schema}", public`);
    const exists = await client.query<{ present: boolean }>("SELECT to_regclass('cairn_schema') IS NOT NULL AS present");
    return exists.rows[0]?.present ? appliedRows(client) : [];
  });
  const current = rows.at(-1)?.version ?? 0;
  const done = new Set(rows.map((r) => r.version));
  return {
    current,
    latest: migrations.at(-1)?.version ?? 0,
    applied: rows.map((r) => ({ version: r.version, name: r.name, appliedAt: r.applied_at })),
    pending: migrations.filter((m) => !done.has(m.version)).map((m) => ({ version: m.version, name: m.name })),
  };
}

/**
 * Apply every migration newer than the database, each in one transaction holding the schema's
 * advisory lock (another process that migrated meanwhile is noticed after the lock is taken).
 * Returns the versions this call applied.
 */
export async function migrate(db: PgDatabase, migrations: PgMigration[] = loadPgMigrations(), now: () => number = Date.now): Promise<number[]> {
  const latest = migrations.at(-1)?.version ?? 0;
  const applied: number[] = [];
  const check = await db.transaction(async (client) => {
    await prepare(client, db.schema);
    return appliedRows(client);
  });
  const current = check.at(-1)?.version ?? 0;
  if (current > latest) throw tooNew(current, latest, db.location);
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    await db.transaction(async (client) => {
      await prepare(client, db.schema);
      const rows = await appliedRows(client);
      const now_ = rows.at(-1)?.version ?? 0;
      if (now_ > latest) throw tooNew(now_, latest, db.location);
      if (rows.some((r) => r.version === migration.version)) return;
      await client.query(migration.sql);
      await client.query('INSERT INTO cairn_schema (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, now()]);
      applied.push(migration.version);
    });
  }
  return applied;
}
