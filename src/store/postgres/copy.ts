/**
 * `cairn copy`: move everything one store holds into another (SQLite ⇄ PostgreSQL, or between
 * two of the same kind): memories with every version and forgotten ones, vectors, the event
 * log, snapshots, state, the session substrate and the review queue.
 *
 * Each table is read in key order in batches and upserted by key, so a copy that was stopped
 * can be run again: it resumes after the last batch it finished (a cursor kept in the target's
 * state) and rewriting a row is harmless. At the end both sides are counted and hashed table by
 * table; a difference fails the copy.
 */
import { createHash } from 'node:crypto';
import { CairnError } from '../../errors.js';
import type { Store } from '../../types.js';
import { SqliteStore } from '../sqlite/store.js';
import { postgresEndpoint, sqliteEndpoint } from './copy-endpoints.js';
import { TABLES, TableHash, type CopyEndpoint, type TableSpec } from './copy-tables.js';
import { PostgresStore } from './store.js';

export interface TableReport {
  table: string;
  source: number;
  target: number;
  copied: number;
  sourceHash: string;
  targetHash: string;
  ok: boolean;
}

export interface CopyReport {
  from: string;
  to: string;
  tables: TableReport[];
  ok: boolean;
  /** Rows skipped because an earlier, interrupted run had copied them. */
  resumed: number;
}

export interface CopyOptions {
  /** Rows per read and per write transaction. @default 500 */
  batchSize?: number;
  /** Called after each batch with rows done and the total. */
  onProgress?: (done: number, total: number, table: string) => void;
  /** Ignore the cursors of an interrupted run and copy every row again. @default false */
  restart?: boolean;
}

export function copyEndpoint(store: Store): CopyEndpoint {
  if (store instanceof SqliteStore) return sqliteEndpoint(store);
  if (store instanceof PostgresStore) return postgresEndpoint(store);
  throw new CairnError('INVALID_INPUT', `cannot copy ${store.name} stores (SQLite and PostgreSQL only)`);
}

async function hashTable(endpoint: CopyEndpoint, table: TableSpec, batch: number): Promise<TableHash> {
  const hash = new TableHash();
  let after: unknown[] | null = null;
  for (;;) {
    const rows = await endpoint.read(table, after, batch);
    for (const row of rows) hash.add(row);
    const last = rows.at(-1);
    if (!last || rows.length < batch) return hash;
    after = table.key.map((k) => last[k]);
  }
}

/** Copy every table of `from` into `to`, then verify counts and content hashes. */
export async function copyStore(fromStore: Store, toStore: Store, options: CopyOptions = {}): Promise<CopyReport> {
  const from = copyEndpoint(fromStore);
  const to = copyEndpoint(toStore);
  const batch = options.batchSize ?? 500;
  const counts = new Map<string, number>();
  for (const table of TABLES) counts.set(table.name, await from.count(table));
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const model = await from.vectorModel();
  const run = createHash('sha256').update(from.location).digest('hex').slice(0, 16);
  const cursorKey = (table: TableSpec): string => `copy.${run}.${table.name}`;
  let done = 0;
  let resumed = 0;
  const copied = new Map<string, number>();
  for (const table of TABLES) {
    if (table.name === 'vectors' && model === null) continue;
    const saved = options.restart ? null : await to.getState(cursorKey(table));
    let after = saved === null ? null : (JSON.parse(saved) as unknown[]);
    if (after !== null) {
      // Rows up to the cursor were copied by the interrupted run.
      const skipped = await countUpTo(from, table, after, batch);
      resumed += skipped;
      done += skipped;
    }
    let n = 0;
    for (;;) {
      const rows = await from.read(table, after, batch);
      if (rows.length === 0) break;
      await to.write(table, rows, model);
      n += rows.length;
      done += rows.length;
      const last = rows[rows.length - 1] as Record<string, unknown>;
      after = table.key.map((k) => last[k]);
      await to.setState(cursorKey(table), JSON.stringify(after));
      options.onProgress?.(done, total, table.name);
      if (rows.length < batch) break;
    }
    copied.set(table.name, n);
  }
  await to.finish();
  const tables: TableReport[] = [];
  for (const table of TABLES) {
    const source = await hashTable(from, table, batch);
    const target = await hashTable(to, table, batch);
    const sourceHash = source.digest();
    const targetHash = target.digest();
    tables.push({
      table: table.name,
      source: source.rows,
      target: target.rows,
      copied: copied.get(table.name) ?? 0,
      sourceHash,
      targetHash,
      ok: source.rows === target.rows && sourceHash === targetHash,
    });
  }
  const ok = tables.every((t) => t.ok);
  // A verified copy leaves no cursors behind: running it again starts from the first row.
  if (ok) for (const table of TABLES) await to.setState(cursorKey(table), null);
  return { from: from.location, to: to.location, tables, ok, resumed };
}

async function countUpTo(endpoint: CopyEndpoint, table: TableSpec, until: unknown[], batch: number): Promise<number> {
  // Rows at or before the cursor, counted by paging (endpoints have no ranged count).
  let n = 0;
  let after: unknown[] | null = null;
  const key = JSON.stringify(until);
  for (;;) {
    const rows = await endpoint.read(table, after, batch);
    for (const row of rows) {
      n++;
      if (JSON.stringify(table.key.map((k) => row[k])) === key) return n;
    }
    const last = rows.at(-1);
    if (!last || rows.length < batch) return n;
    after = table.key.map((k) => last[k]);
  }
}
