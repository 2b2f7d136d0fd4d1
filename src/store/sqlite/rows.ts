/**
 * What SQLite stores differently (JSON as text, booleans as 0/1, `?` parameters, tags through
 * json_each, snapshot members by rowid); the memory model itself is ../memory-rows.ts.
 */
import type { Memory, MemoryFilter, ReviewItem } from '../../types.js';
import { MEMORY_FIELDS, filterWhere, memorySelectList, memoryToRow, rowToMemory as sharedRowToMemory, type FilterDialect, type MemoryEncoding, type StoredMemoryRow } from '../memory-rows.js';
import { rowToReview as sharedRowToReview, type StoredReviewRow } from '../review-rows.js';

/** A `memories` row as better-sqlite3 returns it: JSON columns as text, `pinned` as 0/1, and the rowid. */
export interface MemoryRow extends StoredMemoryRow {
  rowid: number;
  tags: string;
  provenance: string | null;
  files: string;
  pinned: number;
  meta: string;
}

export const MEMORY_COLUMNS = memorySelectList('m.rowid AS rowid');

/** SQLite keeps JSON as text and booleans as 0/1. */
const SQLITE_ENCODING: MemoryEncoding = {
  encodeJson: (value) => JSON.stringify(value),
  decodeJson: (value) => JSON.parse(value as string) as unknown,
  encodeTags: (tags) => JSON.stringify(tags),
  decodeTags: (value) => JSON.parse(value as string) as string[],
  encodeBool: (value) => (value ? 1 : 0),
  decodeBool: (value) => value === 1,
  encodeText: (value) => value,
};

export function rowToMemory(row: MemoryRow): Memory {
  return sharedRowToMemory(row, SQLITE_ENCODING);
}

/**
 * A raw row (see {@link rawRowToMemory}) read as a {@link MemoryRow}: each column a getter into the
 * array, so the shared decoder reads it where a keyed row has a property. Copying the array into a
 * keyed object instead adds 25 properties by name one at a time — each a new object shape the first
 * time and a generic keyed store always, ~40K instructions a row with V8's optimizing compiler off,
 * as in the hooks (src/hooks/run.ts): ~5% of a post-compact session-start at 100K memories.
 */
class RawMemoryRow {
  constructor(readonly values: readonly unknown[]) {}
}
for (const [i, column] of ['rowid', ...MEMORY_FIELDS].entries()) {
  Object.defineProperty(RawMemoryRow.prototype, column, {
    get(this: RawMemoryRow) {
      return this.values[i];
    },
  });
}

/**
 * A memory from a row read in better-sqlite3's raw mode (`statement.raw(true)`, columns as
 * {@link MEMORY_COLUMNS}: the rowid, then {@link MEMORY_FIELDS} in order). Raw mode hands back an
 * array per row, which costs about half what the driver's keyed row objects do on lists of
 * hundreds of rows (the session-start hooks' context builder); the memory is the same.
 */
export function rawRowToMemory(values: readonly unknown[]): Memory {
  return sharedRowToMemory(new RawMemoryRow(values) as unknown as MemoryRow, SQLITE_ENCODING);
}

export function rowToReview(row: StoredReviewRow): ReviewItem {
  return sharedRowToReview(row, SQLITE_ENCODING);
}

/** Named parameters (`@column`) of an INSERT INTO memories. */
export function memoryToParams(memory: Memory): Record<string, unknown> {
  return memoryToRow(memory, SQLITE_ENCODING);
}

/** SQLite's spelling of a filter: `?` parameters (appended to `params`), json_each for tags, rowid for snapshots. */
export function sqliteDialect(params: unknown[]): FilterDialect {
  const param = (value: unknown): string => {
    params.push(value);
    return '?';
  };
  return {
    param,
    // Unary + keeps the planner on the ordered partial indexes (see migration 004).
    projectIs: (project, orUserScope) => (orUserScope ? `(+m.project = ${param(project)} OR +m.project IS NULL)` : `+m.project = ${param(project)}`),
    oneOf: (column, values) => `${column} IN (${values.map(param).join(', ')})`,
    hasAllTags: (tags) => tags.map((tag) => `EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ${param(tag)})`).join(' AND '),
    hasAnyTag: (tags) => `EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value IN (${tags.map(param).join(', ')}))`,
    inSnapshot: (snapshotId) => `m.rowid IN (SELECT memory_rowid FROM snapshot_members WHERE snapshot_id = ${param(snapshotId)})`,
    bool: (value) => param(value ? 1 : 0),
    always: '1',
  };
}

/** A WHERE clause (over alias `m`) and its positional parameters for a MemoryFilter. */
export function filterSql(filter: MemoryFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const where = filterWhere(filter, sqliteDialect(params));
  return { where, params };
}

export { blobToVector, vectorToBlob } from '../embedding-rows.js';
