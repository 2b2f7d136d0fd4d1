/**
 * The memory model as both SQL stores hold it: the `memories` columns (same names and order in
 * the SQLite and PostgreSQL schemas), their mapping to {@link Memory} and back, the list orders,
 * and the WHERE clause of a {@link MemoryFilter}. A dialect supplies only what truly differs:
 * how it encodes JSON and booleans, how it writes a parameter, a list and a tag test, and the
 * key the snapshot tables point at (src/store/sqlite/rows.ts, src/store/postgres/rows.ts).
 */
import type { FileRef, Kind, ListOptions, Memory, MemoryFilter, Provenance, Scope, Source } from '../types.js';

/** The `memories` columns both schemas share, in the order inserts list them. */
export const MEMORY_FIELDS = [
  'id', 'text', 'kind', 'scope', 'project', 'session', 'tags', 'importance', 'source', 'provenance', 'files',
  'created_at', 'updated_at', 'valid_from', 'valid_to', 'supersedes', 'access_count', 'last_accessed_at',
  'last_recalled_at', 'pinned', 'deleted_at', 'content_hash', 'meta', 'context',
] as const;

export type MemoryField = (typeof MEMORY_FIELDS)[number];

/** A `memories` row as a driver returns it: the shared columns, those a dialect encodes its own way as `unknown`. */
export interface StoredMemoryRow {
  id: string;
  text: string;
  kind: string;
  scope: string;
  project: string | null;
  session: string | null;
  tags: unknown;
  importance: number;
  source: string;
  provenance: unknown;
  files: unknown;
  created_at: number;
  updated_at: number;
  valid_from: number;
  valid_to: number | null;
  supersedes: string | null;
  access_count: number;
  last_accessed_at: number | null;
  last_recalled_at: number | null;
  pinned: unknown;
  deleted_at: number | null;
  content_hash: string;
  meta: unknown;
  /** Added by SQLite migration 010 and PostgreSQL migration 009. */
  context: string | null;
}

/** A memory's column values as the dialect writes them. */
export type MemoryColumnValues = Record<MemoryField, unknown>;

/**
 * How a dialect stores the values SQL does not hold alike: JSON (SQLite: text; PostgreSQL: jsonb,
 * parsed by the driver), tags (a JSON array; a text[]), booleans (0/1; boolean) and text
 * (PostgreSQL cannot hold U+0000).
 */
export interface MemoryEncoding {
  encodeJson(value: unknown): unknown;
  decodeJson(value: unknown): unknown;
  encodeTags(tags: readonly string[]): unknown;
  decodeTags(value: unknown): string[];
  encodeBool(value: boolean): unknown;
  decodeBool(value: unknown): boolean;
  encodeText(value: string): string;
}

/** The SELECT list of every shared column over alias `m`, after the dialect's row key (`m.rowid AS rowid`, `m.pk`). */
export function memorySelectList(rowKey: string): string {
  return [rowKey, ...MEMORY_FIELDS.map((field) => `m.${field}`)].join(', ');
}

export function rowToMemory(row: StoredMemoryRow, encoding: MemoryEncoding): Memory {
  return {
    id: row.id,
    text: row.text,
    kind: row.kind as Kind,
    scope: row.scope as Scope,
    project: row.project,
    session: row.session,
    tags: encoding.decodeTags(row.tags),
    importance: row.importance,
    source: row.source as Source,
    provenance: row.provenance === null ? null : (encoding.decodeJson(row.provenance) as Provenance),
    files: encoding.decodeJson(row.files) as FileRef[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    validFrom: row.valid_from,
    validTo: row.valid_to,
    supersedes: row.supersedes,
    accessCount: row.access_count,
    lastAccessedAt: row.last_accessed_at,
    lastRecalledAt: row.last_recalled_at,
    pinned: encoding.decodeBool(row.pinned),
    deletedAt: row.deleted_at,
    contentHash: row.content_hash,
    meta: encoding.decodeJson(row.meta) as Record<string, unknown>,
    context: row.context ?? null,
  };
}

/** A memory's column values, keyed by column (in {@link MEMORY_FIELDS} order), encoded for the dialect. */
export function memoryToRow(memory: Memory, encoding: MemoryEncoding): MemoryColumnValues {
  return {
    id: memory.id,
    text: encoding.encodeText(memory.text),
    kind: memory.kind,
    scope: memory.scope,
    project: memory.project,
    session: memory.session,
    tags: encoding.encodeTags(memory.tags),
    importance: memory.importance,
    source: memory.source,
    provenance: memory.provenance === null ? null : encoding.encodeJson(memory.provenance),
    files: encoding.encodeJson(memory.files),
    created_at: memory.createdAt,
    updated_at: memory.updatedAt,
    valid_from: memory.validFrom,
    valid_to: memory.validTo,
    supersedes: memory.supersedes,
    access_count: memory.accessCount,
    last_accessed_at: memory.lastAccessedAt,
    last_recalled_at: memory.lastRecalledAt,
    pinned: encoding.encodeBool(memory.pinned),
    deleted_at: memory.deletedAt,
    content_hash: memory.contentHash,
    meta: encoding.encodeJson(memory.meta),
    context: memory.context === null ? null : encoding.encodeText(memory.context),
  };
}

/**
 * The text a memory is indexed under for full text: its text, its tags and its context (the words
 * it answers, `Memory.context`), one source for every store and copy path.
 */
export function memoryIndexSource(memory: Pick<Memory, 'text' | 'tags' | 'context'>): string {
  const base = `${memory.text} ${memory.tags.join(' ')}`;
  return memory.context ? `${base} ${memory.context}` : base;
}

/** ORDER BY of each list order, over alias `m` (ties broken by id, so pages are stable). */
export const ORDER_SQL: Readonly<Record<NonNullable<ListOptions['order']>, string>> = {
  'created-desc': 'm.created_at DESC, m.id DESC',
  'created-asc': 'm.created_at ASC, m.id ASC',
  'updated-desc': 'm.updated_at DESC, m.id DESC',
  'importance-desc': 'm.importance DESC, m.created_at DESC',
  'access-desc': 'm.access_count DESC, m.created_at DESC',
};

/** What a dialect writes differently in a filter's WHERE clause; each call records its parameters. */
export interface FilterDialect {
  /** A parameter placeholder for `value` (`?`, `$n`), recording the value. */
  param(value: unknown): string;
  /** The memory belongs to `project` (or, with `orUserScope`, has no project), as the dialect's planner likes it. */
  projectIs(project: string, orUserScope: boolean): string;
  /** `<column>` is one of `values` (non-empty). */
  oneOf(column: string, values: readonly string[]): string;
  /** The memory carries every tag of `tags` (non-empty). */
  hasAllTags(tags: readonly string[]): string;
  /** The memory carries one of `tags` (non-empty). */
  hasAnyTag(tags: readonly string[]): string;
  /** The memory is a member of the snapshot (the members table points at the dialect's row key). */
  inSnapshot(snapshotId: string): string;
  /** A boolean value as the dialect stores it, as a parameter. */
  bool(value: boolean): string;
  /** What an empty WHERE clause says (`1`, `true`). */
  always: string;
}

/** The WHERE clause over alias `m` of a filter: one logic, both dialects. */
export function filterWhere(filter: MemoryFilter, sql: FilterDialect): string {
  const clauses: string[] = [];
  if (filter.project !== undefined) {
    if (filter.project === null) clauses.push('m.project IS NULL');
    else clauses.push(sql.projectIs(filter.project, filter.includeUserScope !== false));
  }
  if (filter.session !== undefined) clauses.push(`m.session = ${sql.param(filter.session)}`);
  for (const [column, values] of [['m.kind', filter.kinds], ['m.scope', filter.scopes], ['m.source', filter.sources]] as const) {
    if (values && values.length > 0) clauses.push(sql.oneOf(column, values));
  }
  if (filter.tags && filter.tags.length > 0) clauses.push(sql.hasAllTags(filter.tags));
  if (filter.anyTags && filter.anyTags.length > 0) clauses.push(sql.hasAnyTag(filter.anyTags));
  if (filter.snapshotId !== undefined) {
    // A snapshot's members are what was current when it was sealed, whatever happened since.
    clauses.push(sql.inSnapshot(filter.snapshotId));
  } else {
    if (!filter.includeSuperseded) clauses.push('m.valid_to IS NULL');
    if (filter.onlyDeleted) clauses.push('m.deleted_at IS NOT NULL');
    else if (!filter.includeDeleted) clauses.push('m.deleted_at IS NULL');
  }
  if (filter.createdAfter !== undefined) clauses.push(`m.created_at >= ${sql.param(filter.createdAfter)}`);
  if (filter.createdBefore !== undefined) clauses.push(`m.created_at < ${sql.param(filter.createdBefore)}`);
  if (filter.pinned !== undefined) clauses.push(`m.pinned = ${sql.bool(filter.pinned)}`);
  return clauses.length > 0 ? clauses.join(' AND ') : sql.always;
}
